"""The block cursors of ``codedraft bench model``: a user who has just opened a block and pressed Enter.

A case hides the whole body of one block (the body of a ``def``, ``if``, ``for``, ``with``, ``class``
…) in a held-out file: the document is the file up to the block's opening line, a line holding only the
body's indentation with the cursor at its end, and the rest of the file after the body. The truth is
the hidden body, line by line. The selection depends on the seed only.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache

import tree_sitter_python
from tree_sitter import Language, Parser

from bench.corpus import SourceFile
from bench.infill_cases import parses_cleanly


@dataclass(frozen=True)
class BlockCase:
    """``prefix + suffix`` is the document the user has open, the cursor at the end of ``prefix``;
    ``body`` is what the user will write there, line by line (the first without the indentation the
    cursor line already holds)."""

    path: str
    prefix: str
    suffix: str
    body: tuple[str, ...]


@cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_python.language()))


def _block_rows(text: str) -> list[tuple[int, int]]:
    """(first row, last row) of each multi-line block body of a Python file, 0-based, whose body
    starts on a row of its own."""
    rows: list[tuple[int, int]] = []
    stack = [_parser().parse(text.encode("utf-8")).root_node]
    while stack:
        node = stack.pop()
        if node.type == "block" and node.parent is not None:
            start, end = node.start_point[0], node.end_point[0]
            if start > node.parent.start_point[0]:
                rows.append((start, end))
        stack.extend(node.children)
    return sorted(rows)


def block_cases(files: list[SourceFile], count: int, seed: int) -> list[BlockCase]:
    """``count`` cases drawn with a seed: files in turn, a random block of each."""
    rng = random.Random(seed)
    pools = []
    for file in files:
        if parses_cleanly(file.text):
            rows = _block_rows(file.text)
            if rows:
                pools.append((file, rows))
    cases: list[BlockCase] = []
    while pools and len(cases) < count:
        file, rows = pools[len(cases) % len(pools)]
        start, end = rng.choice(rows)
        lines = file.text.split("\n")
        first = lines[start]
        indent = first[: len(first) - len(first.lstrip())]
        cases.append(
            BlockCase(
                path=file.path,
                prefix="\n".join(lines[:start]) + "\n" + indent,
                suffix="\n" + "\n".join(lines[end + 1 :]),
                body=(first[len(indent) :], *lines[start + 1 : end + 1]),
            )
        )
    return cases
