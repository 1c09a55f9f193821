"""The gate's operating point moved by the user's own accepts.

The rule, with the user's last settled suggestions of a model (``accept_history``), the point
``completion.confidence`` asks for (``base``), and a target accept rate:

1. With fewer than :data:`MIN_OUTCOMES` outcomes that carry figures, the point is ``base``.
2. Otherwise the outcomes make a curve as the bench's records do (``confidence_gate.curve``): for each
   threshold on ``base.feature``, the user's accept rate among the suggestions at or above it.
   Thresholds with fewer than :data:`MIN_SUPPORT` suggestions at or above them are too noisy to judge.
3. The threshold becomes the most lenient one whose accept rate reaches the target. If the user takes
   enough even of the least sure suggestions shown (the whole curve reaches the target), it becomes
   the bottom of the band, so that less sure suggestions are shown and judged in turn; if no threshold
   reaches the target, the top of the band.
4. The result is clamped to ``base.threshold ± band(base.feature)``: the gate follows the user, but
   never far from what was measured, and a streak of dismissals cannot silence it.

The target is the accept rate the gate aims for: a number in ``completion.confidence`` itself, and
with ``auto`` the calibrated point's measured precision (the share of exactly right first lines it
shows; :data:`DEFAULT_TARGET` for a model without a calibration). ``off`` has no point to adapt.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from lsp_server.completion.accept_history import Outcome
from lsp_server.completion.confidence_gate import Calibration, OperatingPoint, curve, for_precision

MIN_OUTCOMES = 50
"""Outcomes needed before the user's accepts move the point."""
MIN_SUPPORT = 20
"""Suggestions at or above a threshold needed for its accept rate to count."""
BAND = 0.5
"""How far (in log-probability) the adapted threshold may move from the one asked for."""
WIDER_BANDS = {"sum": 1.5}
"""Figures that spread wider than a per-token one: a line's total spans about three times the least
token's range over the same share of suggestions (on the default model's cursors, least ±0.5 around
its calibrated point moves the coverage from 30 % to 72 %; the total needs ±1.5 for the same)."""
DEFAULT_TARGET = 0.5
"""The accept rate aimed for with ``auto`` and a model nobody measured."""


def accept_target(setting: str, calibration: Calibration | None) -> float | None:
    """The accept rate the gate aims for under ``completion.confidence`` = ``setting`` (None: off)."""
    if setting == "off":
        return None
    if setting != "auto":
        return float(setting)
    if calibration is None or math.isnan(calibration.chosen.precision):
        return DEFAULT_TARGET
    return calibration.chosen.precision


def adapted_point(base: OperatingPoint, outcomes: Sequence[Outcome], target: float) -> OperatingPoint:
    """``base`` with its threshold moved by the rule above (precision and coverage unknown: nan)."""
    scored = [(outcome.scores, outcome.accepted) for outcome in outcomes if base.feature in outcome.scores]
    if len(scored) < MIN_OUTCOMES:
        return base
    supported = [
        point for point in curve(scored, base.feature) if point.coverage * len(scored) >= MIN_SUPPORT
    ]
    band = WIDER_BANDS.get(base.feature, BAND)
    low, high = base.threshold - band, base.threshold + band
    reaching = for_precision(supported, target)
    if reaching is None:
        threshold = high
    elif reaching.coverage == 1.0:
        threshold = low
    else:
        threshold = min(max(reaching.threshold, low), high)
    return OperatingPoint(base.feature, threshold)
