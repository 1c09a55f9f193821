"""Builds and loads `kernels/` (`library.cpp` and the headers it includes), the CPU kernels of the
q4_1 and q4_1_q8 weights forms, as `torch.ops.codedraft_cpu`.

The source is compiled on first use with the system's C++ compiler (`$CXX`, else `c++`) against the
installed torch, for this CPU (`-march=native`: AVX2 and AVX-512 VNNI where it has them, plain loops
elsewhere), into `~/.cache/codedraft/kernels` (or `$CODEDRAFT_KERNEL_CACHE`), named by a hash of
everything that shapes the binary, so later processes load it at once: the compile is paid once per
machine and torch version (figures: docs/benchmarks.md). `CODEDRAFT_KERNEL_PORTABLE=1` builds the
plain-loop paths even where the CPU has AVX2 (the tests compare the two).
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import torch

SOURCES = Path(__file__).with_name("kernels")
SOURCE = SOURCES / "library.cpp"
# -ffp-contract=off: `a * b + c` written in C++ rounds twice, as the same arithmetic in torch does
# (the rotary of `rotate_store_attend` against `rotary.apply_rotary`); fused multiply-adds only where
# the intrinsics ask for them.
_FLAGS = ("-O3", "-march=native", "-ffp-contract=off", "-fopenmp", "-shared", "-fPIC", "-std=c++20", "-w")
PORTABLE_VARIABLE = "CODEDRAFT_KERNEL_PORTABLE"
_lock = threading.Lock()
_loaded: Path | None = None


class KernelBuildError(RuntimeError):
    """The kernels could not be compiled or loaded (no compiler, a compiler error, a bad binary)."""


def cache_dir() -> Path:
    """Where built kernels are kept."""
    configured = os.environ.get("CODEDRAFT_KERNEL_CACHE")
    if configured:
        return Path(configured)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "codedraft" / "kernels"


def _compiler() -> str:
    compiler = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not compiler:
        raise KernelBuildError(
            "no C++ compiler found for the block-quantized kernels (set CXX, or install one: "
            "apt-get install g++); --weights float16 needs none"
        )
    return compiler


def _cpu_flags() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return line
    except OSError:
        pass
    return platform.processor()


def _torch_paths() -> tuple[Path, Path]:
    root = Path(torch.__file__).parent
    return root / "include", root / "lib"


def _flags() -> tuple[str, ...]:
    portable = os.environ.get(PORTABLE_VARIABLE) == "1"
    return (*_FLAGS, "-DCODEDRAFT_PORTABLE") if portable else _FLAGS


def _command(compiler: str, output: Path) -> list[str]:
    include, lib = _torch_paths()
    abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
    return [
        compiler,
        *_flags(),
        f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
        f"-I{include}",
        f"-I{include / 'torch' / 'csrc' / 'api' / 'include'}",
        str(SOURCE),
        "-o",
        str(output),
        f"-L{lib}",
        f"-Wl,-rpath,{lib}",
        "-ltorch_cpu",
        "-lc10",
    ]


def _library_path(compiler: str) -> Path:
    key = hashlib.sha256()
    files = sorted(SOURCES.glob("*.[ch]*"))
    parts = [path.read_bytes() for path in files]
    for part in (*parts, torch.__version__.encode(), compiler.encode(), _cpu_flags().encode()):
        key.update(part)
        key.update(b"\0")
    key.update(" ".join(_flags()).encode())
    return cache_dir() / f"cpu_kernels-{key.hexdigest()[:16]}.so"


def _build(compiler: str, target: Path) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch_dir = tempfile.TemporaryDirectory(dir=target.parent)
    except OSError as exc:
        raise KernelBuildError(f"cannot write the kernel cache {target.parent}: {exc}") from exc
    with scratch_dir as scratch:
        output = Path(scratch) / target.name
        try:
            done = subprocess.run(_command(compiler, output), capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise KernelBuildError(f"could not run {compiler}: {exc}") from exc
        if done.returncode != 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-15:])
            raise KernelBuildError(f"compiling kernels/{SOURCE.name} failed ({compiler}):\n{tail}")
        os.replace(output, target)  # atomic: a concurrent build of the same key is harmless


def load_cpu_kernels() -> Path:
    """Make `torch.ops.codedraft_cpu` available in this process, building it first if needed;
    returns the library's path. Raises KernelBuildError with the reason when it cannot."""
    global _loaded
    with _lock:
        if _loaded is not None:
            return _loaded
        compiler = _compiler()
        target = _library_path(compiler)
        if not target.exists():
            _build(compiler, target)
        try:
            torch.ops.load_library(str(target))
        except OSError as exc:
            raise KernelBuildError(f"could not load {target}: {exc}") from exc
        _loaded = target
        return target
