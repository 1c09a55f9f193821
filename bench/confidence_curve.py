"""The confidence gate measured as a curve: for each corpus of ``codedraft bench model``, the precision
of the suggestions shown (exact first line, and parsing as before) against the share shown as the
gate's threshold moves, per figure the gate may use; the point the gate would choose; and the
baselines (the empty suggestion, the line above), which the gate does not apply to.

``--calibrate`` writes the chosen point and its curve into the language server's calibrations
(``lsp_server/completion/calibrations.json``) under the served model's name.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lsp_server.completion.confidence_gate import (
    CALIBRATIONS,
    FEATURES,
    OperatingPoint,
    choose,
    curve,
)


def _records(case_results: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping[str, float], bool, bool]]:
    """(figures, exact, parses) of each case where the model made a suggestion."""
    found = []
    for case in case_results:
        figures = case.get("confidence")
        shown = case.get("healing_shown")
        if figures is None or not shown:
            continue
        found.append((figures, shown.rstrip() == case["expected"].rstrip(), bool(case.get("shown_parses"))))
    return found


def gate_figures(case_results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The gate's curve over one corpus's case records: per feature, the curve and its chosen point;
    the best feature (most precise chosen point); and the precision without the gate."""
    records = _records(case_results)
    if not records:
        return {"suggestions": 0}
    exact = [(figures, right) for figures, right, _ in records]
    without = sum(right for _, right in exact) / len(exact)
    per_feature: dict[str, Any] = {}
    for feature in FEATURES:
        points = curve(exact, feature)
        chosen = choose(points)
        per_feature[feature] = {
            "chosen": _point(chosen, records),
            "curve": [_point(point, records) for point in thinned(points)],
        }
    best = max(
        FEATURES, key=lambda f: per_feature[f]["chosen"]["precision"] if per_feature[f]["chosen"] else 0.0
    )
    chosen_point = per_feature[best]["chosen"]
    return {
        "suggestions": len(records),
        "precision_without_gate": round(without, 4),
        "parses_without_gate": round(sum(p for _, _, p in records) / len(records), 4),
        "best_feature": best,
        "chosen": chosen_point,
        "precision_gain": round(chosen_point["precision"] / without, 2) if chosen_point and without else None,
        "features": per_feature,
    }


def _point(point: OperatingPoint | None, records: Sequence[tuple[Mapping[str, float], bool, bool]]) -> Any:
    if point is None:
        return None
    shown = [parses for figures, _, parses in records if figures[point.feature] >= point.threshold]
    return {
        "feature": point.feature,
        "threshold": round(point.threshold, 4),
        "precision": round(point.precision, 4),
        "coverage": round(point.coverage, 4),
        "parses": round(sum(shown) / len(shown), 4) if shown else math.nan,
    }


def thinned(points: Sequence[OperatingPoint], steps: int = 20) -> list[OperatingPoint]:
    """About ``steps`` points of a curve, evenly spread over coverage, the last (coverage 1) kept."""
    kept: list[OperatingPoint] = []
    for point in points:
        if not kept or point.coverage - kept[-1].coverage >= 1 / steps or point is points[-1]:
            kept.append(point)
    return kept


def calibrate(
    model: str,
    corpora: Mapping[str, Mapping[str, Any]],
    path: Path = CALIBRATIONS,
    later_lines: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The calibration of ``model`` from the corpora's gate figures, written into ``path``: the feature
    chosen most precisely over the corpora together, its curve over all their records; and
    ``later_lines`` (``bench/block_curve.py``) beside it. What this run did not measure (no
    suggestions, no block cursors) keeps its earlier entry."""
    merged: list[Mapping[str, Any]] = [
        case for figures in corpora.values() for case in figures["case_results"]
    ]
    figures = gate_figures(merged)
    existing = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    entry = dict(existing.get(model, {}))
    if figures["suggestions"]:
        feature = figures["best_feature"]
        entry["measured_on"] = sorted(corpora)
        entry["chosen"] = figures["chosen"]
        entry["points"] = figures["features"][feature]["curve"]
    if later_lines is not None:
        entry["later_lines"] = dict(later_lines)
    existing[model] = entry
    path.write_text(json.dumps(existing, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return entry


def report_lines(corpus: str, figures: Mapping[str, Any], baselines: Mapping[str, float]) -> list[str]:
    """A few lines of the gate's figures for the bench's report."""
    if not figures.get("suggestions"):
        return [f"  {corpus}: gate: no suggestions to judge"]
    chosen = figures["chosen"]
    lines = [
        f"  {corpus}: gate on first-line {chosen['feature']} log-probability >= {chosen['threshold']}: "
        f"precision {chosen['precision']:.1%} at coverage {chosen['coverage']:.1%} "
        f"(without the gate {figures['precision_without_gate']:.1%}; {figures['precision_gain']}x), "
        f"parses {chosen['parses']:.1%}",
        "    baselines (no gate, coverage 100 %): "
        + ", ".join(f"{name} {value:.1%}" for name, value in baselines.items()),
    ]
    for feature, entry in figures["features"].items():
        curve_text = " ".join(f"{p['coverage']:.0%}:{p['precision']:.0%}" for p in entry["curve"])
        lines.append(f"    {feature}: coverage:precision {curve_text}")
    return lines
