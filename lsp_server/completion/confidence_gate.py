"""Whether a suggestion is likely enough to be right to show: a gate over how sure the model was of
its first line, with an operating point measured per model.

The daemon reports, per line of a suggestion, its token count and the mean and least log-probability of
its tokens, and the first token's (``RequestFigures.lines``, ``first_token_logprob``); the first line's
total (mean times tokens) is the log-probability of the whole line as the model wrote it.
``codedraft bench model`` records them with whether each first line was exactly right, and turns them
into a curve: for each threshold on one of those figures, the precision of the suggestions it lets
through and the share it lets through (coverage). The operating point a model gets is written in
``calibrations.json`` beside this module (per model: the curve of the figure that separated best, and
the point chosen from it: the most precise one that still shows at least half the suggestions of every
corpus, with a margin; see ``bench/confidence_curve.py``). ``completion.confidence`` picks the point:
``auto`` the model's chosen one, ``off`` no gate, or a target precision such as ``0.5`` (the least
strict point of the curve that reaches it). A model without a calibration gets ``CONSERVATIVE``.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

log = logging.getLogger(__name__)

CALIBRATIONS = Path(__file__).with_name("calibrations.json")
FEATURES = ("mean", "min", "first", "sum")
"""The figures a gate may threshold: the first line's mean and least token log-probability, the first
token's log-probability, and the first line's total log-probability (the whole line's)."""
_FEATURE_WORDS = {"mean": "mean", "min": "least", "first": "first-token", "sum": "total"}
MIN_COVERAGE = 0.5
"""The chosen point shows at least this share of the suggestions the model makes."""


class LineFigures(Protocol):
    """One line's figures, as the engine and the wire both hold them."""

    tokens: int
    mean_logprob: float
    min_logprob: float


@dataclass(frozen=True)
class OperatingPoint:
    """Show a suggestion when its ``feature`` is at least ``threshold``; measured ``precision`` (exact
    first lines among those shown) and ``coverage`` (the share shown) where known (nan otherwise)."""

    feature: str
    threshold: float
    precision: float = math.nan
    coverage: float = math.nan


CONSERVATIVE = OperatingPoint("mean", -0.5)
"""For a model nobody measured: show only a first line whose tokens had a geometric-mean probability
of at least 0.61 (a strict point: a measured curve replaces it, see docs/benchmarks.md#model)."""


def first_line_confidence(
    lines: Sequence[LineFigures], first_token_logprob: float | None
) -> dict[str, float] | None:
    """The gate's figures of a suggestion from the daemon's per-line figures; None without any."""
    if not lines or lines[0].tokens == 0:
        return None
    first = lines[0]
    return {
        "mean": first.mean_logprob,
        "min": first.min_logprob,
        "first": first_token_logprob if first_token_logprob is not None else first.min_logprob,
        "sum": first.mean_logprob * first.tokens,
    }


class DaemonFigures(Protocol):
    """A request's final figures as the daemon sends them (``RequestFigures``)."""

    @property
    def lines(self) -> Sequence[LineFigures]:
        """Per line of the suggestion."""

    @property
    def first_token_logprob(self) -> float:
        """The first token's log-probability (set only where the daemon measured it)."""

    def HasField(self, name: str) -> bool:
        """Whether an optional field is set."""


def gate_figures(figures: DaemonFigures | None) -> dict[str, float] | None:
    """The gate's figures of a suggestion from the daemon's final figures (None without any)."""
    if figures is None:
        return None
    first = figures.first_token_logprob if figures.HasField("first_token_logprob") else None
    return first_line_confidence(figures.lines, first)


def describe(feature: str) -> str:
    """The figure ``feature`` names, in words (the status and the quiet reason say it so)."""
    return f"first line {_FEATURE_WORDS.get(feature, feature)} log-probability"


def quiet_reason(point: OperatingPoint | None, confidence: Mapping[str, float] | None) -> str | None:
    """Why the gate keeps a suggestion back, None to show it (no gate, or no figures to judge by)."""
    if point is None or confidence is None:
        return None
    value = confidence[point.feature]
    if value >= point.threshold:
        return None
    figure = f"{describe(point.feature)} {value:.2f} < {point.threshold:.2f}"
    return f"not confident enough ({figure})"


def curve(records: Iterable[tuple[Mapping[str, float], bool]], feature: str) -> list[OperatingPoint]:
    """Precision and coverage for each threshold on ``feature`` over (figures, right) records, from the
    strictest threshold to the most lenient (coverage 1)."""
    scored = sorted(((figures[feature], right) for figures, right in records), key=lambda item: -item[0])
    total = len(scored)
    points: list[OperatingPoint] = []
    hits = 0
    for shown, (value, right) in enumerate(scored, start=1):
        hits += right
        if shown < total and scored[shown][0] == value:
            continue  # a threshold lets through every suggestion with that value
        points.append(OperatingPoint(feature, value, hits / shown, shown / total))
    return points


def choose(points: Sequence[OperatingPoint], min_coverage: float = MIN_COVERAGE) -> OperatingPoint | None:
    """The most precise point that shows at least ``min_coverage`` of the suggestions."""
    eligible = [point for point in points if point.coverage >= min_coverage]
    return max(eligible, key=lambda point: (point.precision, point.coverage), default=None)


def for_precision(points: Sequence[OperatingPoint], target: float) -> OperatingPoint | None:
    """The most lenient point whose precision reaches ``target``; None when none does."""
    reaching = [point for point in points if point.precision >= target]
    return max(reaching, key=lambda point: point.coverage, default=None)


@dataclass(frozen=True)
class Calibration:
    """A model's measured curve and its chosen point."""

    chosen: OperatingPoint
    points: tuple[OperatingPoint, ...]


def load_calibrations(path: Path = CALIBRATIONS) -> dict[str, Calibration]:
    """The calibrations by model name; empty (with a warning) when the file is missing or malformed."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return {name: _calibration(entry) for name, entry in raw.items()}
    except (OSError, ValueError, KeyError, TypeError) as error:
        log.warning("no confidence calibrations (%s): %s", path, error)
        return {}


def operating_point(setting: str, calibration: Calibration | None) -> OperatingPoint | None:
    """The point ``completion.confidence`` asks for with this model's calibration (None: no gate)."""
    if setting == "off":
        return None
    if setting == "auto":
        return calibration.chosen if calibration is not None else CONSERVATIVE
    target = float(setting)
    if calibration is None:
        return CONSERVATIVE
    return for_precision(calibration.points, target) or max(calibration.points, key=lambda p: p.precision)


def _point(entry: Mapping[str, Any]) -> OperatingPoint:
    return OperatingPoint(
        str(entry["feature"]), float(entry["threshold"]), float(entry["precision"]), float(entry["coverage"])
    )


def _calibration(entry: Mapping[str, Any]) -> Calibration:
    return Calibration(_point(entry["chosen"]), tuple(_point(point) for point in entry["points"]))
