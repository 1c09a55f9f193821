"""The cursors inside a line of ``codedraft bench model --inside-line-cases``."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.corpus import collect_files
from bench.inside_line_cases import _last_brackets, inside_line_cases


@pytest.mark.parametrize(
    ("line", "parts"),
    [
        ("    return max(a, b)", ("    return max(", "a, b", ")")),
        ("    x = foo(bar(x))", ("    x = foo(bar(", "x", "))")),
        ('    d = {"a": [1, 2]}  ', ('    d = {"a": [', "1, 2", "]}  ")),
        ("    foo()", None),
        ("    if x:", None),
        ("    y = a)", None),
    ],
)
def test_the_hole_before_a_lines_closing_brackets(line: str, parts: tuple[str, str, str] | None) -> None:
    found = _last_brackets(line)
    assert (found and (line[: found[0]], line[found[0] : found[1]], line[found[1] :])) == parts


def test_cases_hide_part_of_a_line_with_text_after_it(tiny_corpus: Path) -> None:
    files = collect_files(tiny_corpus)
    cases = inside_line_cases(files, 10, seed=3)
    assert cases == inside_line_cases(files, 10, seed=3)
    assert sorted(case.kind for case in cases) == ["closers"] * 5 + ["identifier"] * 5  # half each
    for case in cases:
        rest = case.suffix.partition("\n")[0]
        assert case.prefix.rpartition("\n")[2] + case.middle + rest == case.line
        assert case.middle and "\n" not in case.middle and rest.strip()
