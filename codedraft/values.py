"""Flag value parsers shared by the subcommands; each names the bad value in its error."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path


def positive_int(text: str) -> int:
    """An integer > 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


@dataclass(frozen=True)
class FilePosition:
    """A position in a file as compilers print it: LINE and COL count from 1 (COL may be omitted)."""

    path: Path
    line: int
    column: int | None


def file_position(text: str) -> FilePosition:
    """Parses ``FILE:LINE:COL`` (or ``FILE:LINE``); the path itself may contain colons."""
    parts = text.rsplit(":", 2)
    numbers: list[int] = []
    while len(parts) > 1 and parts[-1].isdigit() and len(numbers) < 2:
        numbers.insert(0, int(parts.pop()))
    if not numbers:
        raise argparse.ArgumentTypeError(f"expected FILE:LINE[:COL], got {text!r}")
    if any(n < 1 for n in numbers):
        raise argparse.ArgumentTypeError(f"LINE and COL count from 1, got {text!r}")
    path = Path(":".join(parts))
    return FilePosition(path, numbers[0], numbers[1] if len(numbers) == 2 else None)
