"""The corpora the model benchmarks and the training recipe share: Python source files of the local
standard library (or any root), split by path hash into trained-on and held-out files, so every
benchmark scores only files the embedded models were not trained on."""

from __future__ import annotations

import hashlib
import sysconfig
from dataclasses import dataclass
from pathlib import Path

# Third-party code installed into the interpreter is not PSF-licensed; keep it out.
_EXCLUDED_DIRS = frozenset({"site-packages", "dist-packages", "__pycache__"})
_MAX_FILE_BYTES = 400_000  # a few generated tables (unicode data, encodings) are huge and teach little


@dataclass(frozen=True)
class SourceFile:
    """One corpus file: ``path`` is relative to the corpus root, with forward slashes."""

    path: str
    text: str

    @property
    def package(self) -> str:
        """The directory the file sits in; files of one package share context snippets."""
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""


def stdlib_root() -> Path:
    """The standard library directory of the running interpreter."""
    return Path(sysconfig.get_paths()["stdlib"])


def is_held_out(rel_path: str, held_out_percent: int) -> bool:
    """Deterministic split: a file is held out when the hash of its relative path falls in the bucket.

    Hashing the path (not the content) keeps the split stable across patch releases of Python.
    """
    bucket = int.from_bytes(hashlib.sha256(rel_path.encode()).digest()[:4], "big") % 100
    return bucket < held_out_percent


def collect_files(root: Path, max_files: int | None = None) -> list[SourceFile]:
    """All readable ``*.py`` files under ``root`` in a sorted, machine-independent order."""
    files: list[SourceFile] = []
    for file in sorted(root.rglob("*.py")):
        rel = file.relative_to(root).as_posix()
        if _EXCLUDED_DIRS.intersection(rel.split("/")[:-1]):
            continue
        try:
            if file.stat().st_size > _MAX_FILE_BYTES:
                continue
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if text.strip():
            files.append(SourceFile(rel, text))
        if max_files is not None and len(files) >= max_files:
            break
    return files


def split_files(files: list[SourceFile], held_out_percent: int) -> tuple[list[SourceFile], list[SourceFile]]:
    """(train, held_out) by path hash."""
    train = [f for f in files if not is_held_out(f.path, held_out_percent)]
    held = [f for f in files if is_held_out(f.path, held_out_percent)]
    return train, held
