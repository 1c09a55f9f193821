"""The gate's calibration from measured cases: the point chosen over corpora pooled keeps a margin of
coverage on every corpus; earlier runs pool into one calibration; the shipped point is reported on a
run's own cursors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.confidence_curve import (
    COVERAGE_MARGIN,
    calibrate_from_runs,
    calibrated_point,
    shipped_point,
    written_threshold,
)
from codedraft.errors import CommandError
from lsp_server.completion.confidence_gate import MIN_COVERAGE, load_calibrations


def _case(total: float, right: bool) -> dict[str, Any]:
    """A case whose only separating figure is ``sum`` (the others tie, so they cannot be chosen)."""
    return {
        "confidence": {"mean": -1.0, "min": -1.0, "first": -1.0, "sum": total},
        "healing_shown": "x = 1",
        "expected": "x = 1" if right else "y = 2",
        "shown_parses": True,
    }


# stdlib: confident and right, 10 cases; numpy: mostly less confident, 10 cases.
STDLIB = [_case(-0.1 * i, i < 7) for i in range(10)]
NUMPY = [_case(-1.0 - 0.1 * i, i < 4) for i in range(10)]


def test_the_point_shows_enough_of_every_corpus_not_only_of_all_pooled() -> None:
    found = calibrated_point({"stdlib": STDLIB, "numpy": NUMPY})
    assert found is not None
    chosen = found["chosen"]
    assert chosen["feature"] == "sum"
    # Pooled, the most precise point showing half would be sum >= -0.9 (stdlib all, numpy none); the
    # point must show 57.5 % of numpy too: its six most confident cases, down to -1.5.
    assert MIN_COVERAGE + COVERAGE_MARGIN == 0.575
    assert chosen["threshold"] == -1.5
    assert found["coverage_by_corpus"] == {"stdlib": 1.0, "numpy": 0.6}
    assert chosen["precision"] == round((7 + 4) / 16, 4)
    assert calibrated_point({"stdlib": [], "numpy": []}) is None


def test_earlier_runs_pool_into_the_calibration(tmp_path: Path) -> None:
    calibrations = tmp_path / "calibrations.json"
    calibrations.write_text(json.dumps({"m": {"later_lines": {"kept": True}}}))
    runs = []
    for index, (stdlib, numpy) in enumerate([(STDLIB[:5], NUMPY[:5]), (STDLIB[5:], NUMPY[5:])]):
        run = {"model_name": "m", "stdlib": {"case_results": stdlib}, "numpy": {"case_results": numpy}}
        runs.append(tmp_path / f"run{index}.json")
        runs[-1].write_text(json.dumps(run))
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"model_name": "m", "numpy": {"partial": True, "case_results": NUMPY * 5}}))
    said = calibrate_from_runs([*runs, partial], calibrations)
    assert "from 3 runs (stdlib 10 cursors, numpy 10 cursors)" in said
    assert load_calibrations(calibrations)["m"].chosen.threshold == -1.5  # as from the cases in one run
    written = json.loads(calibrations.read_text())["m"]
    assert written["later_lines"] == {"kept": True}  # the block calibration stays
    assert written["measured_on"] == ["numpy", "stdlib"]

    other = tmp_path / "other.json"
    other.write_text(json.dumps({"model_name": "n", "stdlib": {"case_results": STDLIB}}))
    with pytest.raises(CommandError, match="the runs are of 2 models"):
        calibrate_from_runs([runs[0], other], calibrations)
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(CommandError, match=r"broken\.json: not a bench model --json file"):
        calibrate_from_runs([broken], calibrations)
    no_expected = {"confidence": {"sum": -1.0}, "healing_shown": "x"}  # a case without its truth
    unreadable = {
        "latin1.json": b"\xff\xfe{",
        "cases.json": json.dumps({"model_name": "m", "stdlib": {"case_results": [no_expected]}}).encode(),
    }
    for name, content in unreadable.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(CommandError, match=f"{name}: not a bench model --json file"):
            calibrate_from_runs([tmp_path / name], calibrations)
    quiet = tmp_path / "quiet.json"  # a run whose model suggested nothing: no point to choose
    nothing = {"confidence": None, "healing_shown": "", "expected": "x = 1", "shown_parses": False}
    quiet.write_text(json.dumps({"model_name": "m", "stdlib": {"case_results": [nothing] * 4}}))
    before = calibrations.read_text()
    with pytest.raises(CommandError, match="nothing written"):
        calibrate_from_runs([quiet], calibrations)
    assert calibrations.read_text() == before


def test_a_run_reports_the_shipped_point_on_its_own_cursors(tmp_path: Path) -> None:
    calibrations = tmp_path / "calibrations.json"
    point = {"feature": "sum", "threshold": -0.45, "precision": 0.9, "coverage": 0.5}
    calibrations.write_text(json.dumps({"m": {"chosen": point, "points": [point]}}))
    shown = shipped_point("m", STDLIB, calibrations)
    # five cases at or above -0.45 (0, -0.1, ..., -0.4), all right; 7 of 10 right without the gate
    assert shown == {
        "feature": "sum",
        "threshold": -0.45,
        "precision": 1.0,
        "coverage": 0.5,
        "precision_gain": round(1.0 / 0.7, 2),
    }
    assert shipped_point("unknown", STDLIB, calibrations) is None
    old = [{**case, "confidence": {"mean": -1.0, "min": -1.0, "first": -1.0}} for case in STDLIB]
    assert shipped_point("m", old, calibrations) is None  # a run from before the figure existed


def test_a_written_threshold_still_lets_through_the_suggestion_it_came_from() -> None:
    assert written_threshold(-2.58264) == -2.5827  # round() would give -2.5826, above the record
    assert written_threshold(-1.5) == -1.5
    cases = [_case(-0.5, True), _case(-1.0, True), _case(-2.58264, True), _case(-3.0, False)]
    found = calibrated_point({"stdlib": cases})
    assert found is not None and found["chosen"]["threshold"] == -2.5827  # shows 3 of 4, all right
    assert (found["chosen"]["coverage"], found["chosen"]["precision"]) == (0.75, 1.0)


def test_runs_with_block_cursors_pool_into_the_later_lines_point(tmp_path: Path) -> None:
    calibrations = tmp_path / "calibrations.json"
    calibrations.write_text(json.dumps({"m": {"later_lines": {"kept": True}}}))
    sure = {"row": 1, "blank": False, "above": False}
    # Twelve later lines: the six surer ones (mean -0.25) right, the six others (mean -2.0) wrong.
    right = {"first_exact": True, "later": [{**sure, "right": True, "mean": -0.25, "min": -0.5}] * 3}
    wrong = {"first_exact": False, "later": [{**sure, "right": False, "mean": -2.0, "min": -3.0}] * 3}
    runs = []
    for index, block in enumerate([right, wrong]):
        corpus = {"case_results": STDLIB[index * 5 : index * 5 + 5], "block_results": [block, right]}
        run = {
            "model_name": "m",
            "stdlib": corpus,
            "numpy": {"case_results": NUMPY[index * 5 : index * 5 + 5]},
        }
        runs.append(tmp_path / f"run{index}.json")
        runs[-1].write_text(json.dumps(run))
    said = calibrate_from_runs(runs, calibrations)
    assert "later lines from block cursors (stdlib 4, numpy 0)" in said
    later = json.loads(calibrations.read_text())["m"]["later_lines"]
    assert later["measured_on"] == ["stdlib"]
    # the least strict point right half the time: mean >= -2.0 shows all 12, 9 right (75 %)
    assert later["chosen"] == {
        "feature": "mean",
        "threshold": -2.0,
        "precision": 0.75,
        "coverage": 1.0,
        "shown": 12,
        "right": 9,
    }
    assert load_calibrations(calibrations)["m"].chosen.threshold == -1.5  # the gate's as without blocks
