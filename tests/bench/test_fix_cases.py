"""The fix bench's cases: each check fails as written and passes with the one line fixed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.fix_agent import outcome_kind
from bench.fix_cases import CASES, CHECK, FixCase


def _check(root: Path, case: FixCase, fixed: bool) -> int:
    for relative, text in case.files.items():
        if fixed and relative == case.path:
            lines = text.split("\n")
            lines[case.line - 1] = case.fixed
            text = "\n".join(lines)
        (root / relative).write_text(text)
    command = CHECK.replace("python3", sys.executable, 1)
    return subprocess.run(command, shell=True, cwd=root, capture_output=True, timeout=60).returncode


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_the_check_fails_with_the_bug_and_passes_with_the_fixed_line(case: FixCase, tmp_path: Path) -> None:
    (tmp_path / "broken").mkdir()
    (tmp_path / "fixed").mkdir()
    assert _check(tmp_path / "broken", case, fixed=False) == 1
    assert _check(tmp_path / "fixed", case, fixed=True) == 0


def test_the_set_covers_each_kind_of_slip() -> None:
    kinds = [case.kind for case in CASES]
    assert {kind: kinds.count(kind) for kind in set(kinds)} == {
        "off by one": 3, "wrong operator": 3, "wrong name": 2, "missing return": 2,
    }  # fmt: skip
    assert len({case.name for case in CASES}) == len(CASES) == 10
    assert CASES[0].broken_line() == "    return sum(values) / (len(values) - 1)"


@pytest.mark.parametrize(
    ("outcome", "kind"),
    [
        ("the check passed: `x` exited with status 0", "passed"),
        ("the check failed: `x` exited with status 1", "failed"),
        ("rejected: the reply holds no search/replace block, diff or code block", "unparsed"),
        ("rejected: the reply changes 0 lines; one corrected line was asked for", "unchanged"),
        ("rejected: the reply changes 2 lines; one corrected line was asked for", "unparsed"),
        ("rejected: the edit changes nothing", "unchanged"),
        ("rejected: a.py: the proposed code does not parse as Python at line 2", "unparsed"),
        (
            "rejected: a.py: the proposal is 22x the size of the code it replaces (at most 3x is offered)",
            "rejected",
        ),
    ],
)
def test_outcome_kinds(outcome: str, kind: str) -> None:
    assert outcome_kind(outcome) == kind
