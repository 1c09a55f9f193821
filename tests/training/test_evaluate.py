"""`python -m training.evaluate` on the tiny run's models: real generation, every figure present."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from codedraft.errors import CommandError
from training.evaluate import main


def test_model_eval_runs_on_tiny_models(
    tiny_run: Path, tiny_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "figures.json"
    argv = [
        "--target",
        str(tiny_run / "codedraft-base"),
        "--draft",
        str(tiny_run / "codedraft-draft"),
        "--corpus-root",
        str(tiny_corpus),
        "--cases",
        "4",
        "--ppl-rows",
        "2",
        "--max-new-tokens",
        "4",
        "--repetition",
        "--json",
        str(out),
    ]
    assert main(argv) == 0
    figures = json.loads(out.read_text())
    assert figures["repetition_cases"] == 4 and figures["repetition_stopped_is_prefix"] is True
    assert figures["repetition_tokens_saved"] == (
        figures["repetition_tokens_generated_without_stop"] - figures["repetition_tokens_generated_with_stop"]
    )
    assert 0 <= figures["repetition_cut_share"] <= 1  # a share of what this model writes
    assert figures["cases"] == 4
    assert figures["perplexity_tokens"] == 2 * 63
    assert figures["target_perplexity"] > 1 and figures["draft_perplexity"] > 1
    # An empty line matches exactly the blank cases.
    assert figures["exact_match_empty"] == (figures["cases"] - figures["non_blank_cases"]) / figures["cases"]
    assert 0 <= figures["draft_greedy_agreement"] <= 1  # a share of what this model writes
    assert not math.isnan(figures["tokens_per_target_pass_k4"])
    # Draft speculation through the project engine on the same prompts: greedy, so output identical.
    assert figures["spec_cases"] == 4 and figures["spec_outputs_identical"] is True
    assert 0 <= figures["spec_draft_acceptance"] <= 1
    assert "exact match" in capsys.readouterr().out


def test_model_eval_names_a_bad_target(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="--target"):
        main(["--target", str(tmp_path / "missing")])
