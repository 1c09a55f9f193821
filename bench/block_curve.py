"""Whether a block's later lines are worth reading, measured as a curve: over the block cursors of
``codedraft bench model`` (records of ``bench/block_infill.py``), the share of later lines shown that
are exactly right (precision) against the share of the whole blocks' later lines shown (coverage), as
the later-lines threshold of ``lsp_server.completion.block_or_line`` moves, per figure it may use.

The point chosen for a model is the least strict one whose later lines are right at least
``LATER_LINE_PRECISION`` of the time (a later line worth reading is more often right than wrong), over
at least ``MIN_SHOWN_LINES`` lines; where none is, the model keeps one line (threshold ``None``).
Shown beside it: the whole block (no threshold), one line (no later line at all) and the baselines at
the whole block's places (the truth is blank there; the truth repeats its line above).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from bench.confidence_curve import thinned
from lsp_server.completion.block_or_line import LATER_FEATURES, ONE_LINE
from lsp_server.completion.confidence_gate import OperatingPoint, curve

LATER_LINE_PRECISION = 0.5
MIN_SHOWN_LINES = 10


def _value(line: Mapping[str, Any], feature: str) -> float:
    value = line[feature]
    return -math.inf if value is None else float(value)


def choose_later(points: Sequence[OperatingPoint], total: int) -> OperatingPoint:
    """The least strict point whose precision reaches ``LATER_LINE_PRECISION`` over at least
    ``MIN_SHOWN_LINES`` of ``total`` later lines; ``ONE_LINE`` when none does."""
    eligible = [
        p
        for p in points
        if p.precision >= LATER_LINE_PRECISION
        and p.coverage * total >= MIN_SHOWN_LINES
        and math.isfinite(p.threshold)
    ]
    return max(eligible, key=lambda p: p.coverage, default=ONE_LINE)


def _point(point: OperatingPoint, total: int) -> dict[str, Any]:
    shown = round(point.coverage * total) if math.isfinite(point.threshold) else 0
    return {
        "feature": point.feature,
        "threshold": round(point.threshold, 4) if math.isfinite(point.threshold) else None,
        "precision": round(point.precision, 4) if shown else 0.0,
        "coverage": round(point.coverage, 4) if shown else 0.0,
        "shown": shown,
        "right": round(point.precision * shown) if shown else 0,
    }


def block_figures(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The later lines' figures over one corpus's block records (or several corpora's together)."""
    if not records:
        return {"block_cases": 0}
    later = [line for record in records for line in record["later"]]
    total = len(later)
    right = sum(line["right"] for line in later)
    per_feature: dict[str, Any] = {}
    chosen: dict[str, Any] = _point(ONE_LINE, total)
    for feature in LATER_FEATURES:
        points = [p for p in curve([({feature: _value(x, feature)}, x["right"]) for x in later], feature)]
        finite = [p for p in points if math.isfinite(p.threshold)]
        best = _point(choose_later(finite, total), total)
        # a point of fewer lines says nothing: a target precision must not pick it either
        supported = [p for p in finite if p.coverage * total >= MIN_SHOWN_LINES]
        per_feature[feature] = {"chosen": best, "curve": [_point(p, total) for p in thinned(supported)]}
        if best["shown"] > chosen["shown"]:
            chosen = best
    return {
        "block_cases": len(records),
        "first_line_exact": round(sum(r["first_exact"] for r in records) / len(records), 4),
        "later_lines": total,
        "whole_block": {
            "shown": total,
            "right": right,
            "precision": round(right / total, 4) if total else 0.0,
        },
        "baselines": {
            "empty": round(sum(x["blank"] for x in later) / total, 4) if total else 0.0,
            "line above": round(sum(x["above"] for x in later) / total, 4) if total else 0.0,
        },
        "chosen": chosen,
        "min_precision": LATER_LINE_PRECISION,
        "features": per_feature,
    }


def later_lines_entry(corpora: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any] | None:
    """The ``later_lines`` calibration from the corpora's block records together (None without any):
    the chosen point and the curve of its figure."""
    merged = [record for records in corpora.values() for record in records]
    figures = block_figures(merged)
    if not figures["block_cases"]:
        return None
    chosen = figures["chosen"]
    return {
        "measured_on": sorted(name for name, records in corpora.items() if records),
        "min_precision": LATER_LINE_PRECISION,
        "chosen": chosen,
        "points": figures["features"][chosen["feature"]]["curve"],
    }


def block_report_lines(corpus: str, figures: Mapping[str, Any]) -> list[str]:
    """A few lines of the later lines' figures for the bench's report."""
    cases = figures.get("block_cases", 0)
    if not cases:
        return [f"  {corpus}: block cursors: none asked"]
    whole, chosen, base = figures["whole_block"], figures["chosen"], figures["baselines"]
    where = (
        f"{chosen['feature']} >= {chosen['threshold']}"
        if chosen["threshold"] is not None
        else "one line only"
    )
    lines = [
        f"  {corpus}: {cases} block cursors, first line exact {figures['first_line_exact']:.1%}; later lines "
        f"exactly right: whole block {whole['right']} of {whole['shown']} ({whole['precision']:.1%}), "
        f"truncated to one line 0 of 0, chosen point ({where}) {chosen['right']} of {chosen['shown']}"
        + (f" ({chosen['precision']:.1%})" if chosen["shown"] else ""),
        f"    baselines at the whole block's later lines: empty {base['empty']:.1%}, "
        f"line above {base['line above']:.1%}; per block cursor, right/wrong later lines read: "
        f"whole block {whole['right'] / cases:.2f}/{(whole['shown'] - whole['right']) / cases:.2f}, "
        f"chosen point {chosen['right'] / cases:.2f}/{(chosen['shown'] - chosen['right']) / cases:.2f}",
    ]
    for feature, entry in figures["features"].items():
        curve_text = " ".join(f"{p['coverage']:.0%}:{p['precision']:.0%}" for p in entry["curve"])
        lines.append(f"    later-line {feature}: coverage:precision {curve_text}")
    return lines
