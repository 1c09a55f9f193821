"""Generates the Python gRPC code in ``inference/api/`` from ``protos/`` (run as ``make proto``).

The generated modules import each other by the proto package path (``from codedraft.v1 import …``),
which is not an importable package here, so those imports are rewritten to relative ones. A test runs
:func:`generate` into a temporary folder and compares the result with the committed files.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = REPO_ROOT / "protos"
API_DIR = Path(__file__).resolve().parent / "api"
_PACKAGE_IMPORT = re.compile(r"^from codedraft\.v1 import (\w+) as (\w+)$", re.MULTILINE)


def proto_files(proto_root: Path = PROTO_ROOT) -> list[Path]:
    """The ``.proto`` files of the wire API, relative to ``proto_root``."""
    return sorted(p.relative_to(proto_root) for p in (proto_root / "codedraft").rglob("*.proto"))


def generate(out_dir: Path, proto_root: Path = PROTO_ROOT) -> list[Path]:
    """Runs protoc (from grpcio-tools) into ``out_dir``/codedraft/v1 and returns the files written."""
    from grpc_tools import protoc  # dev dependency: only needed to regenerate

    out_dir.mkdir(parents=True, exist_ok=True)
    include = Path(protoc.__file__).resolve().parent / "_proto"
    args = [
        "grpc_tools.protoc",
        f"-I{proto_root}",
        f"-I{include}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        *[str(p) for p in proto_files(proto_root)],
    ]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed for {proto_root}")
    written = sorted(p for p in out_dir.rglob("*") if p.is_file() and p.suffix in {".py", ".pyi"})
    for path in written:
        text = path.read_text()
        fixed = _PACKAGE_IMPORT.sub(r"from . import \1 as \2", text)
        if fixed != text:
            path.write_text(fixed)
    for package in {p.parent for p in written} | {out_dir / "codedraft"}:
        init = package / "__init__.py"
        if not init.exists():
            init.write_text('"""Generated from protos/ by inference.protogen; do not edit."""\n')
    return sorted(p for p in out_dir.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=API_DIR, help="output folder (default: inference/api)")
    args = parser.parse_args(argv)
    for path in generate(args.out):
        print(path.relative_to(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
