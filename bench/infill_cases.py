"""Single-line infilling cases on held-out functions, and the tree-sitter syntax check.

A case hides one whole line inside a function body: the middle is that line without its newline, the
prefix ends just after the previous newline and the suffix starts with the line's own newline, as an
editor shows a cursor placed at the start of the line.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import tree_sitter_python
from tree_sitter import Language, Node, Parser

from bench.corpus import SourceFile


@dataclass(frozen=True)
class InfillCase:
    """One hidden line: ``prefix + middle + suffix`` is the whole file; ``line_above`` is its baseline."""

    path: str
    prefix: str
    middle: str
    suffix: str
    line_above: str

    @property
    def file_text(self) -> str:
        return self.prefix + self.middle + self.suffix


@cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_python.language()))


def parses_cleanly(text: str) -> bool:
    """True when tree-sitter-python finds no ERROR or MISSING node."""
    return not _parser().parse(text.encode("utf-8")).root_node.has_error


def _function_body_lines(root: Node) -> list[int]:
    """0-based line numbers strictly after a function's ``def`` line, up to its last line."""
    lines: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "function_definition":
            body = node.child_by_field_name("body")
            if body is not None:
                lines.update(range(max(node.start_point[0] + 1, body.start_point[0]), body.end_point[0] + 1))
        stack.extend(node.children)
    return sorted(lines)


def function_line_cases(files: list[SourceFile], count: int, seed: int) -> list[InfillCase]:
    """``count`` cases drawn with a seed: files in turn, a random function-body line of each.

    Blank lines inside functions are kept (an empty completion is right for them), so the empty
    baseline scores the share of blank lines rather than zero by construction.
    """
    rng = random.Random(seed)
    pools = []
    for file in files:
        if parses_cleanly(file.text):
            body = _function_body_lines(_parser().parse(file.text.encode("utf-8")).root_node)
            if body:
                pools.append((file, body))
    cases: list[InfillCase] = []
    while pools and len(cases) < count:
        file, body = pools[len(cases) % len(pools)]
        lines = file.text.split("\n")
        index = rng.choice(body)
        start = sum(len(line) + 1 for line in lines[:index])
        end = start + len(lines[index])
        cases.append(
            InfillCase(
                path=file.path,
                prefix=file.text[:start],
                middle=lines[index],
                suffix=file.text[end:],
                line_above=lines[index - 1] if index > 0 else "",
            )
        )
    return cases


def truncate_around(
    prefix: str, suffix: str, count_tokens: Callable[[str], int], budget: int, prefix_share: float = 0.75
) -> tuple[str, str]:
    """Whole lines of ``prefix`` (nearest the hole first) and of ``suffix`` within ``budget`` tokens.

    The prefix may use ``prefix_share`` of the budget plus whatever the suffix leaves unused.
    """
    suffix_lines = suffix.split("\n")
    kept_suffix: list[str] = []
    used = 0
    suffix_budget = int(budget * (1 - prefix_share))
    for line in suffix_lines:
        cost = count_tokens(line + "\n")
        if used + cost > suffix_budget:
            break
        kept_suffix.append(line)
        used += cost
    prefix_lines = prefix.split("\n")  # the last element is "" (prefix ends with a newline) or a partial line
    kept_prefix: list[str] = []
    for line in reversed(prefix_lines):
        cost = count_tokens(line + "\n")
        if used + cost > budget:
            break
        kept_prefix.append(line)
        used += cost
    return "\n".join(reversed(kept_prefix)), "\n".join(kept_suffix)
