"""The gate's point moved by the user's accepts: the rule of ``adaptive_threshold``, case by case."""

from __future__ import annotations

import math

import pytest

from lsp_server.completion.accept_history import Outcome
from lsp_server.completion.adaptive_threshold import (
    BAND,
    MIN_OUTCOMES,
    WIDER_BANDS,
    accept_target,
    adapted_point,
)
from lsp_server.completion.confidence_gate import Calibration, OperatingPoint

BASE = OperatingPoint("min", -1.0, 0.66, 0.5)


def outcomes(*runs: tuple[int, float, bool]) -> list[Outcome]:
    """``count`` outcomes with the gate's ``min`` figure ``score``, accepted or not, per run."""
    return [
        Outcome({"mean": 0.0, "min": score, "first": 0.0}, accepted)
        for count, score, accepted in runs
        for _ in range(count)
    ]


# 25 sure ones all taken, 25 middling ones taken 3 times in 5, 20 unsure ones never: the user's curve
# runs -0.6: 25/25, -0.8: 40/50 = 0.8, -1.0: 40/70 = 0.571.
MIXED = outcomes((25, -0.6, True), (15, -0.8, True), (10, -0.8, False), (20, -1.0, False))


@pytest.mark.parametrize(
    ("target", "threshold"),
    [
        (0.7, -0.8),  # the most lenient threshold whose accept rate reaches 70 %
        (0.8, -0.8),  # exactly reached
        (0.81, -0.6),
        (1.0, -0.6),
        (0.5, -1.0 - BAND),  # everything shown reaches it: show less sure ones too (band's bottom)
    ],
)
def test_the_threshold_moves_to_where_the_users_accept_rate_meets_the_target(
    target: float, threshold: float
) -> None:
    adapted = adapted_point(BASE, MIXED, target)
    assert adapted.feature == "min"
    assert adapted.threshold == pytest.approx(threshold)
    assert math.isnan(adapted.precision) and math.isnan(adapted.coverage)


def test_nothing_moves_before_enough_outcomes() -> None:
    few = outcomes((MIN_OUTCOMES - 1, -0.9, False))
    assert adapted_point(BASE, few, 0.5) == BASE
    assert adapted_point(BASE, outcomes((MIN_OUTCOMES, -0.9, False)), 0.5).threshold == pytest.approx(-0.5)


def test_outcomes_without_the_points_figure_do_not_count() -> None:
    without_min = [Outcome({"mean": -0.2}, False) for _ in range(80)]
    assert adapted_point(BASE, without_min, 0.5) == BASE


def test_a_run_of_dismissals_stops_at_the_top_of_the_band() -> None:
    dismissed = outcomes((500, -0.01, False))
    assert adapted_point(BASE, dismissed, 0.3).threshold == pytest.approx(-1.0 + BAND)


def test_a_threshold_seen_by_few_suggestions_is_not_trusted() -> None:
    base = OperatingPoint("min", -0.3)
    # 5 sure ones taken (100 % above -0.1, but only 5 of them), 60 unsure ones never: no supported
    # threshold reaches 50 %, so the band's top (0.2), not -0.1
    few_sure = outcomes((5, -0.1, True), (60, -1.0, False))
    assert adapted_point(base, few_sure, 0.5).threshold == pytest.approx(0.2)


def test_a_threshold_outside_the_band_is_clamped() -> None:
    base = OperatingPoint("min", -2.0)
    assert adapted_point(base, MIXED, 0.7).threshold == pytest.approx(-1.5)  # -0.8 is beyond -2.0 + 0.5


def test_the_target_comes_from_the_setting() -> None:
    calibration = Calibration(BASE, (BASE,))
    assert accept_target("off", calibration) is None
    assert accept_target("0.4", calibration) == 0.4
    assert accept_target("auto", calibration) == 0.66
    assert accept_target("auto", None) == 0.5
    assert accept_target("auto", Calibration(OperatingPoint("mean", -0.5), ())) == 0.5


def test_a_lines_total_moves_within_its_wider_band() -> None:
    base = OperatingPoint("sum", -2.5)
    dismissed = [Outcome({"sum": -0.01}, False) for _ in range(500)]
    assert adapted_point(base, dismissed, 0.3).threshold == pytest.approx(-2.5 + WIDER_BANDS["sum"])
    taken = [Outcome({"sum": -9.0}, True) for _ in range(500)]
    assert adapted_point(base, taken, 0.3).threshold == pytest.approx(-4.0)
