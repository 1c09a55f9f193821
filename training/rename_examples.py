"""Rename examples: a function, a comment announcing a renamed symbol, then the renamed function.

They teach the base model to copy a long stretch of its prompt with one systematic change, which is
what a rename refactor asks of it (and what prompt-lookup speculation speeds up). New names are drawn
from the file's other identifiers or built from the old one, so no single phrase is memorised.
"""

from __future__ import annotations

import ast
import keyword
import random
import re
import textwrap
from collections import Counter

from training.example_text import EOS

_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{2,}\b")
_MIN_LINES, _MAX_LINES = 4, 70
_ANNOUNCEMENTS = (
    "# The same function with `{old}` renamed to `{new}`:",
    "# Renamed `{old}` to `{new}`:",
    "# `{old}` is now called `{new}`:",
)


def function_sources(text: str) -> list[str]:
    """The dedented source of each function of ``text`` with ``_MIN_LINES``-``_MAX_LINES`` lines."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    lines = text.splitlines(keepends=True)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno:
            count = node.end_lineno - node.lineno + 1
            if _MIN_LINES <= count <= _MAX_LINES:
                found.append(textwrap.dedent("".join(lines[node.lineno - 1 : node.end_lineno])).rstrip("\n"))
    return found


def _new_name(rng: random.Random, old: str, others: list[str]) -> str:
    choice = rng.random()
    if choice < 0.4 and others:
        return rng.choice(others)
    if choice < 0.7:
        return f"{old}_{rng.choice(('renamed', 'new', 'value', 'item', 'result', 'obj', '2'))}"
    return f"{rng.choice(('new', 'my', 'the', 'local', 'other'))}_{old.lstrip('_')}"


def rename_training_text(rng: random.Random, function: str, file_names: list[str]) -> str | None:
    """``function``, a blank line, an announcement, the function with one name replaced, end of text.

    The renamed symbol appears at least twice and is not a keyword; None when there is none. The new
    name is one of ``file_names`` (identifiers of the surrounding file) or built from the old one.
    """
    counts = Counter(_NAME.findall(function))
    candidates = [n for n, c in counts.items() if c >= 2 and not keyword.iskeyword(n) and n != "self"]
    if not candidates:
        return None
    old = rng.choice(candidates)
    others = [n for n in file_names if n not in counts and not keyword.iskeyword(n)]
    new = _new_name(rng, old, others)
    if new in counts:  # a clash would make the rename ambiguous: build a fresh name instead
        new = f"{old}_renamed"
    renamed = re.sub(rf"\b{re.escape(old)}\b", new, function)
    announcement = rng.choice(_ANNOUNCEMENTS).format(old=old, new=new)
    return f"{function}\n\n{announcement}\n{renamed}\n{EOS}"
