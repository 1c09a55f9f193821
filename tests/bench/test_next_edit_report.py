"""bench next-edit's figures from replayed steps and chains."""

from __future__ import annotations

import pytest

from bench.next_edit.replay import Chain, Step
from bench.next_edit.report import print_figures, summarize

BEFORE = "a = 1\nb = 2\nc = 3\n"
CURRENT = "a = 10\nb = 2\nc = 3\n"  # the user's edit
TRUTH = "a = 10\nb = 20\nc = 3\n"


def _step(kind: str, number: int, predicted: str, truth: str, latency_ms: float, **figures: object) -> Step:
    edits = int(predicted != CURRENT)
    return Step("c", kind, number, BEFORE, CURRENT, predicted, truth, truth, latency_ms, edits, dict(figures))


def test_the_figures_count_each_kind_of_step_apart(capsys: pytest.CaptureFixture[str]) -> None:
    steps = [
        _step("multi", 1, TRUTH, TRUTH, 900.0, modelCalls=1, promptTokens=500, computedTokens=50),
        _step("multi", 2, CURRENT, TRUTH, 300.0, modelCalls=1, quiet="next edit: no edit to predict"),
        _step("multi", 3, BEFORE, CURRENT, 200.0, modelCalls=1, promptTokens=520, computedTokens=30),
        _step("silence", 1, CURRENT, CURRENT, 1000.0, modelCalls=2, promptTokens=1000, computedTokens=200),
        _step("rename", 1, CURRENT, TRUTH, 100.0),
    ]
    chains = [
        Chain(
            "r1", "x", "y = 1\nprint(x, x)\n", "y = 1\nprint(y, x)\n", "y = 1\nprint(y, y)\n", 1, 0, [50.0]
        ),
        Chain("r2", "p", "q = f(p)\n", "q = f(q)\n", "q = f(p)\n", 1, 0, [70.0]),
    ]
    figures = summarize(steps, chains)
    assert (figures.to_predict, figures.exact, figures.shown) == (2, 0.5, 0.5)
    assert figures.line_f1 == 0.5
    assert figures.line_precision == 1.0
    assert (figures.to_stay_quiet, figures.quiet) == (2, 0.5)
    assert (figures.answers, figures.reverts) == (2, 0.5)
    assert (figures.rename_precision, figures.rename_recall) == (0.5, 0.5)
    assert figures.rename_code_recall == 0.5
    assert figures.rename_first_shown == 0.0
    assert figures.latency_ms["cold (first request on the file)"] == (900.0, 1000.0, 3)
    assert figures.latency_ms["warm (later requests on the file)"] == (200.0, 300.0, 2)
    assert figures.latency_ms["model asked, cold"] == (900.0, 1000.0, 2)
    assert figures.latency_ms["model asked, warm, an edit shown"] == (200.0, 200.0, 1)
    assert figures.latency_ms["rename chain, after each accept"] == (50.0, 70.0, 2)
    assert (figures.prompt_tokens, figures.computed_tokens) == (500.0, 50.0)
    assert (figures.model_calls, figures.finished_calls) == (4, 3)
    assert figures.quiet_reasons == {"next edit: no edit to predict": 1}
    print_figures(figures)
    out = capsys.readouterr().out
    assert "exact next edit              50.0 %" in out
    assert "precision 50.0 %, recall 50.0 %" in out
    assert "(3 of 4 calls finished), median: 500, computed (not reused) 50" in out
    assert "quiet   1x: next edit: no edit to predict" in out
