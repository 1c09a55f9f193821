"""Runs a check command in a scratch copy of the workspace, contained.

Backends, best first: bubblewrap; the unshare-based one (``sandbox_init.py`` as PID 1 of new
namespaces); and none at all, which only sets resource limits and says loudly that nothing else
is contained. Every backend sees the same :class:`Layout`: the system's programs and libraries and
the workspace's tools (its virtual environment) read-only, the scratch copy writable at the
workspace's own path, a private ``/tmp``; no home directory, no host ``/tmp``, no network. The
environment is built from nothing (no tokens, keys or SSH agent). Resource limits apply to every
process of the check, and a wall-clock timeout kills the whole process tree.

When codedraft runs as root the check runs as an unprivileged uid: the kernel never applies the
process-count limit to root, so a fork bomb would otherwise go unchecked.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from lsp_server.agent.process_tree import run_killing_tree

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_ENTRIES = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "passwd", "group", "nsswitch.conf",
    "localtime", "ssl", "ca-certificates", "mime.types", "hosts",
)  # fmt: skip
INIT_SCRIPT = Path(__file__).with_name("sandbox_init.py")
BACKENDS = ("bwrap", "unshare", "none")


@dataclass(frozen=True)
class Limits:
    """Resource limits of one check; every process of it gets them."""

    wall_s: float = 60.0
    cpu_s: int = 60
    memory_mb: int = 2048
    file_mb: int = 64
    processes: int = 64
    open_files: int = 1024

    def rlimits(self) -> dict[str, int]:
        return {
            "RLIMIT_CPU": self.cpu_s,
            "RLIMIT_AS": self.memory_mb << 20,
            "RLIMIT_FSIZE": self.file_mb << 20,
            "RLIMIT_NPROC": self.processes,
            "RLIMIT_NOFILE": self.open_files,
            "RLIMIT_CORE": 0,
        }


@dataclass
class Layout:
    """What the check sees: ``(kind, source..., destination)`` entries mounted in order, and its cwd."""

    entries: list[list[str]] = field(default_factory=list)
    cwd: str = "/"

    @classmethod
    def for_scratch(cls, scratch: Path, workspace: Path, tools: list[Path]) -> Layout:
        """The system read-only, ``scratch`` writable at ``workspace``'s path, ``tools`` read-only."""
        layout = cls(cwd=str(workspace))
        for directory in SYSTEM_DIRS:
            if os.path.islink(directory):
                layout.entries.append(["symlink", os.readlink(directory), directory])
            elif os.path.isdir(directory):
                layout.entries.append(["ro", directory, directory])
        for name in ETC_ENTRIES:
            if os.path.exists(f"/etc/{name}"):
                layout.entries.append(["ro", os.path.realpath(f"/etc/{name}"), f"/etc/{name}"])
        layout.entries += [["proc", "/proc"], ["dev", "/dev"], ["tmpfs", "/tmp"]]
        layout.entries.append(["rw", str(scratch), str(workspace)])
        for tool in tools:
            if not any(tool.is_relative_to(d) for d in SYSTEM_DIRS):
                layout.entries.append(["ro", str(tool), str(tool)])
        return layout

    def bind_sources(self) -> list[str]:
        return [entry[1] for entry in self.entries if entry[0] in ("ro", "rw")]


@dataclass
class CheckRun:
    """The outcome of one check: exit status (None when killed for time), output, and warnings."""

    command: str
    exit_code: int | None
    output: str
    timed_out: bool
    backend: str
    seconds: float
    warnings: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def summary(self) -> str:
        if self.timed_out:
            return f"`{self.command}` was stopped after {self.seconds:.0f} s (time limit)"
        return f"`{self.command}` exited with status {self.exit_code}"


def scrubbed_env(workspace: Path, tools: list[Path]) -> dict[str, str]:
    """An environment from nothing: a PATH (the workspace's tools first), a private HOME and TMPDIR."""
    path = [str(tool / "bin") for tool in tools if (tool / "pyvenv.cfg").exists()]
    path += ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]
    env = {
        "PATH": ":".join(path),
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "PWD": str(workspace),
        "CI": "1",
        # an edit can keep a file's size and mtime second, which would make Python reuse stale bytecode
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    venvs = [str(tool) for tool in tools if (tool / "pyvenv.cfg").exists()]
    if venvs:
        env["VIRTUAL_ENV"] = venvs[0]
    return env


def sandbox_uid() -> int | None:
    """The unprivileged uid checks run as when codedraft runs as root (one per run), else None."""
    return 200_000 + random.randrange(100_000) if os.geteuid() == 0 else None


class Sandbox:
    """Runs checks with one backend (``auto``: the best that works here)."""

    def __init__(self, backend: str = "auto", limits: Limits | None = None) -> None:
        if backend not in (*BACKENDS, "auto"):
            raise ValueError(f"unknown sandbox backend {backend!r}; expected auto, {', '.join(BACKENDS)}")
        self.requested = backend
        self.limits = limits or Limits()

    def backend_for(self, layout: Layout) -> str:
        """The backend to use for ``layout``."""
        if self.requested != "auto":
            return self.requested
        if backend_works("bwrap") and (os.geteuid() != 0 or _all_public(layout)):
            return "bwrap"
        if backend_works("unshare"):
            return "unshare"
        return "none"

    def run(self, command: str, scratch: Path, workspace: Path, tools: list[Path], wall_s: float) -> CheckRun:
        """Runs ``command`` with ``scratch`` mounted at ``workspace``; blocks until it ends or is killed."""
        layout = Layout.for_scratch(scratch, workspace, tools)
        uid = sandbox_uid()
        if uid is not None:
            _hand_over(scratch, uid)
        backend = self.backend_for(layout)
        env = scrubbed_env(workspace, tools)
        warnings: list[str] = []
        if backend == "bwrap":
            argv = bwrap_argv(layout, command, env)
            cwd = None
        elif backend == "unshare":
            argv = unshare_argv(layout, command, env, uid, self.limits)
            cwd = None
        else:
            argv, cwd = ["/bin/sh", "-c", command], str(scratch)
            warnings.append(
                "NO SANDBOX: neither bubblewrap nor unshare works here, so the check ran with only "
                "resource limits: it could reach the network and read or write the user's files"
            )
        wall = max(1.0, min(wall_s, self.limits.wall_s))
        started = time.monotonic()
        if backend == "unshare":  # its init sets the limits and the uid once the new root is built
            exit_code, output, timed_out = run_killing_tree(argv, cwd, {"PATH": "/usr/bin:/bin"}, None, wall)
        else:
            argv = [*rlimit_prefix(self.limits), *argv]
            exit_code, output, timed_out = run_killing_tree(argv, cwd, env, uid, wall)
        return CheckRun(command, exit_code, output, timed_out, backend, time.monotonic() - started, warnings)


def rlimit_prefix(limits: Limits) -> list[str]:
    """``prlimit`` setting every limit (soft and hard) before it runs the rest of the command line."""
    options = {
        "RLIMIT_CPU": "cpu", "RLIMIT_AS": "as", "RLIMIT_FSIZE": "fsize", "RLIMIT_NPROC": "nproc",
        "RLIMIT_NOFILE": "nofile", "RLIMIT_CORE": "core",
    }  # fmt: skip
    return ["prlimit", *(f"--{options[name]}={value}" for name, value in limits.rlimits().items()), "--"]


def bwrap_argv(layout: Layout, command: str, env: dict[str, str]) -> list[str]:
    """The bubblewrap command line for ``layout``."""
    argv = ["bwrap", "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session"]
    argv += ["--cap-drop", "ALL", "--clearenv"]
    for kind, *rest in layout.entries:
        if kind == "ro":
            argv += ["--ro-bind", rest[0], rest[1]]
        elif kind == "rw":
            argv += ["--bind", rest[0], rest[1]]
        elif kind == "symlink":
            argv += ["--symlink", rest[0], rest[1]]
        else:
            # --size bounds the next tmpfs (bubblewrap >= 0.5); /proc and /dev ignore it
            argv += ["--size", str(512 << 20)] if kind == "tmpfs" else []
            argv += [f"--{kind}", rest[0]]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    return [*argv, "--chdir", layout.cwd, "--", "/bin/sh", "-c", command]


def unshare_argv(
    layout: Layout, command: str, env: dict[str, str], uid: int | None, limits: Limits
) -> list[str]:
    """The command line of the unshare backend: ``sandbox_init.py`` as PID 1 of new namespaces."""
    root = Path(_scratch_of(layout)).parent / "root"  # the new root's mount point, beside the scratch
    root.mkdir(exist_ok=True)
    config = {
        "root": str(root),
        "layout": layout.entries,
        "cwd": layout.cwd,
        "uid": uid,
        "rlimits": limits.rlimits(),
        "env": env,
        "command": command,
    }
    argv = ["unshare", "--mount", "--pid", "--net", "--ipc", "--uts", "--fork", "--kill-child"]
    if os.geteuid() != 0:
        argv += ["--user", "--map-root-user"]
    return [*argv, sys.executable, "-I", "-S", str(INIT_SCRIPT), json.dumps(config)]


def _scratch_of(layout: Layout) -> str:
    return next(entry[1] for entry in layout.entries if entry[0] == "rw")


_PROBED: dict[str, bool] = {}


def backend_works(backend: str) -> bool:
    """Whether ``backend`` can start a trivial sandbox here (cached per process)."""
    if backend not in _PROBED:
        needed = {"bwrap": ["bwrap", "prlimit"], "unshare": ["unshare"], "none": ["prlimit"]}[backend]
        _PROBED[backend] = all(shutil.which(program) for program in needed) and _starts(backend)
    return _PROBED[backend]


def _starts(backend: str) -> bool:
    with tempfile.TemporaryDirectory(prefix="codedraft-probe-") as folder:
        scratch = Path(folder) / "ws"
        scratch.mkdir()
        os.chmod(folder, 0o711)
        try:
            run = Sandbox(backend, Limits(wall_s=20)).run("true", scratch, Path("/codedraft-probe"), [], 20)
        except OSError:
            return False
        return run.passed


def _all_public(layout: Layout) -> bool:
    """Whether an unprivileged uid can reach every read-only bind source (bubblewrap runs as one)."""
    scratch_parent = Path(_scratch_of(layout)).parent  # made reachable by _hand_over
    for source in layout.bind_sources():
        path = Path(source)
        reached = [part for part in [*path.parents, path] if part.is_dir() and part != scratch_parent]
        if any(
            not part.stat().st_mode & 0o001 for part in reached if not part.is_relative_to(scratch_parent)
        ):
            return False
    return True


def _hand_over(scratch: Path, uid: int) -> None:
    """Gives the scratch copy to the sandbox's uid, so the check can write it and nothing else."""
    os.chmod(scratch.parent, 0o711)
    for folder, dirs, files in os.walk(scratch):
        os.chown(folder, uid, uid)
        for name in dirs + files:
            os.lchown(os.path.join(folder, name), uid, uid)
