"""What the agent asks of a model by its size, and the models the fix bench measured fixing nothing."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_server.agent.edits import Target
from lsp_server.agent.model_fit import RESULTS_PATH, cannot_fix, model_key, record, reply_form


def test_small_models_are_asked_for_the_line_on_one_line_targets_only() -> None:
    one, several = Target("m.py", 3, 3), Target("m.py", 3, 5)
    assert reply_form(134_515_008, one) == "line"
    assert reply_form(134_515_008, several) == "blocks"
    assert reply_form(1_543_714_304, one) == "blocks"
    assert reply_form(0, one) == "blocks"  # a daemon that did not say


def test_a_model_measured_fixing_nothing_is_named_with_the_measurement(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    record("tiny", 3_900_000, {"fixed": 0, "cases": 10, "steps_limit": 4, "measured": "2026-12-04"}, path)
    record("small", 134_000_000, {"fixed": 3, "cases": 10, "steps_limit": 4, "measured": "2026-12-04"}, path)
    assert cannot_fix("tiny", 3_900_000, path) == (
        "the served model, tiny, fixed none of the 10 one-line bugs of `codedraft bench fix` (measured "
        "2026-12-04), so no fix was attempted; serve a larger model (codedraft.daemon.model) to use Fix "
        "with codedraft"
    )
    assert cannot_fix("small", 134_000_000, path) is None
    assert cannot_fix("tiny", 4_000_000, path) is None  # another model of that name: never measured
    assert cannot_fix("never-measured", 1, path) is None
    assert sorted(json.loads(path.read_text())["models"]) == [
        model_key("small", 134_000_000),
        model_key("tiny", 3_900_000),
    ]


def test_the_stored_results_are_bench_figures() -> None:
    models = json.loads(RESULTS_PATH.read_text())["models"]
    assert models
    for figures in models.values():
        assert set(figures) >= {"fixed", "cases", "steps_limit", "measured"}
        assert 0 <= figures["fixed"] <= figures["cases"]
