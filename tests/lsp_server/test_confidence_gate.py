"""The confidence gate's decisions from figures, and its operating points from measured curves."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.confidence_gate import (
    CONSERVATIVE,
    Calibration,
    OperatingPoint,
    choose,
    curve,
    first_line_confidence,
    for_precision,
    load_calibrations,
    operating_point,
    quiet_reason,
)

RECORDS = [
    ({"mean": m, "min": m - 1, "first": m}, right)
    for m, right in [(-0.1, True), (-0.2, True), (-0.3, False), (-0.3, True), (-0.9, False), (-1.5, False)]
]


def test_the_curve_runs_from_strict_to_lenient_and_ties_share_a_threshold() -> None:
    points = curve(RECORDS, "mean")
    assert [(p.threshold, p.precision, p.coverage) for p in points] == [
        (-0.1, 1.0, 1 / 6),
        (-0.2, 1.0, 2 / 6),
        (-0.3, 0.75, 4 / 6),
        (-0.9, 0.6, 5 / 6),
        (-1.5, 0.5, 1.0),
    ]


def test_the_chosen_point_is_the_most_precise_that_shows_half() -> None:
    points = curve(RECORDS, "mean")
    assert choose(points) == points[2]  # coverage 4/6; the stricter points show less than half
    assert choose(points, min_coverage=1.0) == points[-1]
    assert for_precision(points, 0.7) == points[2]  # the most lenient point reaching 70 %
    assert for_precision(points, 1.0) == points[1]
    assert choose([], 0.5) is None


def test_the_gate_keeps_back_what_falls_below_its_threshold_and_says_why() -> None:
    point = OperatingPoint("mean", -0.3)
    assert quiet_reason(point, {"mean": -0.3, "min": -2.0, "first": -1.0}) is None
    assert quiet_reason(point, {"mean": -0.31, "min": -2.0, "first": -1.0}) == (
        "not confident enough (first line mean log-probability -0.31 < -0.30)"
    )
    assert quiet_reason(OperatingPoint("sum", -2.5), {"sum": -2.75}) == (
        "not confident enough (first line total log-probability -2.75 < -2.50)"
    )
    assert quiet_reason(None, {"mean": -9.0, "min": -9.0, "first": -9.0}) is None  # gate off
    assert quiet_reason(point, None) is None  # no figures (a remote engine): shown


def test_figures_from_the_wire() -> None:
    lines = [pb.LineConfidence(tokens=3, mean_logprob=-0.5, min_logprob=-1.25), pb.LineConfidence(tokens=1)]
    assert first_line_confidence(lines, -0.75) == {"mean": -0.5, "min": -1.25, "first": -0.75, "sum": -1.5}
    assert first_line_confidence(lines, None) == {"mean": -0.5, "min": -1.25, "first": -1.25, "sum": -1.5}
    assert first_line_confidence([pb.LineConfidence(tokens=0)], None) is None
    assert first_line_confidence([], None) is None


def test_the_setting_picks_the_point() -> None:
    points = tuple(curve(RECORDS, "mean"))
    calibration = Calibration(points[2], points)
    assert operating_point("off", calibration) is None
    assert operating_point("auto", calibration) == points[2]
    assert operating_point("auto", None) == CONSERVATIVE
    assert operating_point("0.9", calibration) == points[1]
    assert operating_point("0.99", None) == CONSERVATIVE
    # A target no point reaches: the most precise point there is.
    assert operating_point("0.5", Calibration(points[4], (points[4],))) == points[4]
    assert math.isnan(CONSERVATIVE.precision)


def test_a_corrupt_calibration_file_is_ignored_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "calibrations.json"
    broken.write_text('{"m": {"chosen": {"feature": "mean"}}')
    with caplog.at_level(logging.WARNING):
        assert load_calibrations(broken) == {}
    assert "no confidence calibrations" in caplog.text
    assert load_calibrations(tmp_path / "missing.json") == {}


def test_the_shipped_calibrations_load() -> None:
    for name, calibration in load_calibrations().items():
        assert calibration.chosen.coverage >= 0.5, name
        assert {point.feature for point in calibration.points} == {calibration.chosen.feature}, name
