"""The block cursors of `codedraft bench model`, the later lines' curve and its calibration."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from bench.block_cases import block_cases
from bench.block_curve import block_figures, later_lines_entry
from bench.confidence_curve import calibrate
from bench.corpus import SourceFile
from lsp_server.completion.block_or_line import BLOCK, cursor_shape, load_later_lines
from lsp_server.completion.confidence_gate import load_calibrations
from lsp_server.completion.postprocess.context import CursorContext
from tests.bench.walk_source import SOURCE


def test_a_case_hides_a_whole_block_body_under_its_opener() -> None:
    cases = block_cases([SourceFile("walk.py", SOURCE)], 30, seed=0)
    assert {case.body[0] for case in cases} == {
        "found = []",
        "path = os.path.join(top, name)",
        "found.append(path)",
    }
    for case in cases:
        assert case.prefix + "\n".join(case.body) + case.suffix == SOURCE
        assert cursor_shape(CursorContext(case.prefix, case.suffix, "python")) == BLOCK
    inner = next(case for case in cases if case.body[0] == "path = os.path.join(top, name)")
    assert inner.body == (
        "path = os.path.join(top, name)",
        "",
        "        if os.path.isdir(path):",
        "            found.append(path)",
    )
    assert inner.suffix == "\n    return found\n"


def _line(
    right: bool, mean: float | None, least: float | None, blank: bool = False, above: bool = False
) -> dict[str, Any]:
    return {"row": 1, "right": right, "blank": blank, "above": above, "mean": mean, "min": least}


# Sixteen later lines over three blocks: the surer a line, the likelier it is right.
RECORDS = [
    {
        "first_exact": True,
        "later": [_line(True, -0.0625, -0.125), _line(True, -0.125, -0.25), _line(True, -0.125, -0.25)],
    },
    {
        "first_exact": False,
        "later": [
            _line(True, -0.25, -0.375),
            _line(True, -0.25, -0.5),
            _line(False, -0.25, -0.5, above=True),
        ],
    },
    {
        "first_exact": True,
        "later": [
            _line(True, -0.375, -0.5),
            _line(True, -0.5, -0.75),
            _line(False, -0.5, -1.0, blank=True),
            _line(False, -1.0, -2.0),
            _line(False, -1.0, -2.0),
            _line(False, None, None),
            *[_line(False, -1.5, -3.0)] * 4,
        ],
    },
]


def test_the_chosen_point_is_the_least_strict_whose_later_lines_are_right_half_the_time() -> None:
    figures = block_figures(RECORDS)
    assert figures["block_cases"] == 3 and figures["first_line_exact"] == round(2 / 3, 4)
    assert figures["whole_block"] == {"shown": 16, "right": 7, "precision": 0.4375}
    assert figures["baselines"] == {"empty": 0.0625, "line above": 0.0625}
    # min >= -2.0 shows 11 lines, 7 right (64 %), the least strict point reaching 50 %: min >= -3.0
    # shows 15, 7 right (47 %); the line with no figures is never shown
    assert figures["features"]["min"]["chosen"] == {
        "feature": "min",
        "threshold": -2.0,
        "precision": round(7 / 11, 4),
        "coverage": round(11 / 16, 4),
        "shown": 11,
        "right": 7,
    }
    assert figures["features"]["mean"]["chosen"]["threshold"] == -1.0
    assert figures["features"]["mean"]["chosen"]["shown"] == 11
    # a tie in lines shown goes to the first figure, the mean
    assert figures["chosen"] == figures["features"]["mean"]["chosen"]


def test_a_model_whose_later_lines_never_reach_the_precision_keeps_one_line() -> None:
    wrong = [{"first_exact": False, "later": [_line(False, -0.125, -0.125)] * 12}]
    assert block_figures(wrong)["chosen"] == {
        "feature": "min",
        "threshold": None,
        "precision": 0.0,
        "coverage": 0.0,
        "shown": 0,
        "right": 0,
    }
    # too few lines to judge by: one line too
    few = [{"first_exact": True, "later": [_line(True, -0.125, -0.125)] * 9}]
    assert block_figures(few)["chosen"]["threshold"] is None


def test_calibration_adds_later_lines_and_keeps_the_gates_point(tmp_path: Path) -> None:
    path = tmp_path / "calibrations.json"
    gate = {"feature": "min", "threshold": -0.85, "precision": 0.66, "coverage": 0.5}
    path.write_text(json.dumps({"m": {"chosen": gate, "points": [gate], "measured_on": ["numpy"]}}))
    later = later_lines_entry({"stdlib": RECORDS, "numpy": []})
    assert later is not None and later["measured_on"] == ["stdlib"]
    # a run with block cursors only: the gate's entry stays as it was
    calibrate("m", {"stdlib": []}, path, later_lines=later)
    assert load_calibrations(path)["m"].chosen.threshold == -0.85
    chosen = load_later_lines(path)["m"].chosen
    assert (chosen.feature, chosen.threshold, chosen.coverage) == ("mean", -1.0, round(11 / 16, 4))
    assert json.loads(path.read_text())["m"]["measured_on"] == ["numpy"]


def test_the_shipped_calibrations_hold_both_points_for_the_default_model() -> None:
    name = "SmolLM2-135M-Instruct.Q4_1"
    assert load_calibrations()[name].chosen.threshold == -2.5827
    later = load_later_lines()[name]
    assert later.chosen.feature in ("mean", "min")
    assert math.isinf(later.chosen.threshold) or later.chosen.precision >= 0.5
