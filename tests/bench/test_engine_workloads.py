"""The refactor benchmark's case: its prompt, the continuation a faithful rename writes, and the
measure of how much of it an output reproduces."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.engine_workloads import lines_reproduced, refactor_prompt, refactor_prompts
from inference.loading import load_model
from tests.fixtures.tiny_models import make_tiny_checkpoint


def test_lines_reproduced_counts_verbatim_lines_in_order() -> None:
    expected = "a = 1\nb = 2\nc = 3\nd = 4\n"
    assert lines_reproduced(expected, expected) == 4
    assert lines_reproduced(expected, "a = 1\nb = 9\nc = 3\nd = 4") == 3
    assert lines_reproduced(expected, "d = 4\nc = 3\nb = 2\na = 1") == 1  # order matters
    assert lines_reproduced(expected, "c = 3\nc = 3\nc = 3") == 1  # a repeated line counts once
    assert lines_reproduced(expected, "") == 0


@pytest.mark.slow
def test_refactor_case_is_the_rename_of_the_prompts_function(tmp_path: Path) -> None:
    loaded = load_model(make_tiny_checkpoint(tmp_path / "tiny", "llama", max_position_embeddings=4096), "cpu")
    case = refactor_prompt(loaded, 4096)
    assert case is not None and 40 <= case.lines <= 80
    head, _, first_line = case.prompt.rpartition("\n")
    code, _, announcement = head.rpartition("\n\n")
    old, new = re.findall(r"`(\w+)`", announcement)
    assert new == f"{old}_renamed"
    assert first_line + case.continuation == re.sub(rf"\b{old}\b", new, code)
    assert len((first_line + case.continuation).splitlines()) == case.lines


@pytest.mark.slow
def test_refactor_cases_come_from_different_files_in_order_of_preference(tmp_path: Path) -> None:
    loaded = load_model(make_tiny_checkpoint(tmp_path / "tiny", "llama", max_position_embeddings=4096), "cpu")
    cases = refactor_prompts(loaded, 4096, 3, lambda lines: abs(lines - 50))
    assert len(cases) == 3
    assert [abs(c.lines - 50) for c in cases] == sorted(abs(c.lines - 50) for c in cases)
    assert all(40 <= c.lines <= 60 for c in cases)
    functions = [c.prompt.partition("\n\n# The same function")[0] for c in cases]
    assert len(set(functions)) == 3
