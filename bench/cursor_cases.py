"""The cases of ``codedraft bench model [--model PATH]``: cursors in held-out files of two corpora.

Cases come from held-out files (the training recipe's path-hash split) of two corpora: the standard
library, and the Python source of numpy, a dependency of codedraft and so present wherever it is
installed, and not the standard library. A case hides the rest of one line of a function body, with
the cursor where an editor user has it: after the line's indentation, or inside an identifier
(half-typed), or at the start of a blank line. The selection depends on the seed only.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")
HELD_OUT_PERCENT = 3
CORPORA = ("stdlib", "numpy")


@dataclass(frozen=True)
class CursorCase:
    """``prefix + middle + suffix`` is the file; the cursor is at the end of ``prefix``, and the
    document the user has open is ``prefix + suffix`` (the middle is not typed yet)."""

    path: str
    prefix: str
    middle: str
    suffix: str
    line: str
    line_above: str
    kind: str  # "indent", "identifier" or "blank"


def cursor_cases(files: list[Any], count: int, seed: int) -> list[CursorCase]:
    """Cases on random function-body lines, the cursor placed as described in the module docstring."""
    from bench.infill_cases import function_line_cases

    rng = random.Random(seed)
    cases = []
    for case in function_line_cases(files, count, seed):
        line = case.middle
        indent = len(line) - len(line.lstrip())
        names = [m for m in _IDENTIFIER.finditer(line, indent)]
        if not line.strip():
            cut, kind = 0, "blank"
        elif names and rng.random() < 0.5:
            name = rng.choice(names)
            cut, kind = rng.randint(name.start() + 1, name.end() - 1), "identifier"
        else:
            cut, kind = indent, "indent"
        cases.append(
            CursorCase(
                case.path,
                case.prefix + line[:cut],
                line[cut:],
                case.suffix,
                line,
                case.line_above,
                kind,
            )
        )
    return cases


def corpus_root(name: str) -> Path:
    """Where the corpus ``name`` (one of CORPORA) lives on this machine."""
    from bench.corpus import stdlib_root

    if name == "stdlib":
        return stdlib_root()
    import numpy

    return Path(numpy.__file__).parent


def corpus_cases(name: str, count: int, seed: int) -> tuple[int, list[CursorCase]]:
    """The number of held-out files of corpus ``name``, and ``count`` cases drawn from them."""
    from bench.corpus import collect_files, split_files

    _, held = split_files(collect_files(corpus_root(name)), HELD_OUT_PERCENT)
    return len(held), cursor_cases(held, count, seed)
