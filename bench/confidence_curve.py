"""The confidence gate measured as a curve: for each corpus of ``codedraft bench model``, the precision
of the suggestions shown (exact first line, and parsing as before) against the share shown as the
gate's threshold moves, per figure the gate may use; the point the gate would choose; and the
baselines (the empty suggestion, the line above), which the gate does not apply to.

``--calibrate`` writes the chosen point and its curve into the language server's calibrations
(``lsp_server/completion/calibrations.json``) under the served model's name; ``--calibrate-from`` does
the same from earlier runs' ``--json`` files, their cases pooled per corpus (several draws of cursors:
one draw of 60 swings by about ten points of coverage). The point written is the most precise one
that shows at least ``MIN_COVERAGE + COVERAGE_MARGIN`` of every corpus's suggestions, so that a new
draw of about 100 suggestions per corpus (coverage varying by about 5 points) still shows half. Each
run also reports the point the model ships with on its own cursors: a run on cursors the point was
not chosen on is its check.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.cursor_cases import CORPORA
from codedraft.errors import CommandError
from lsp_server.completion.confidence_gate import (
    CALIBRATIONS,
    FEATURES,
    MIN_COVERAGE,
    OperatingPoint,
    choose,
    curve,
    load_calibrations,
)

COVERAGE_MARGIN = 0.075
"""Above ``MIN_COVERAGE`` on every corpus the calibrated point was chosen on (1.5 standard deviations of
the coverage of a new draw of 100 suggestions)."""


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
        "threshold": written_threshold(point.threshold),
        "precision": round(point.precision, 4),
        "coverage": round(point.coverage, 4),
        "parses": round(sum(shown) / len(shown), 4) if shown else math.nan,
    }


def written_threshold(threshold: float) -> float:
    """A threshold as written (4 decimals), rounded down so that the suggestion it was taken from,
    which the point counts as shown, still passes the gate that reads it back."""
    return math.floor(threshold * 10_000) / 10_000


def thinned(points: Sequence[OperatingPoint], steps: int = 20) -> list[OperatingPoint]:
    """About ``steps`` points of a curve, evenly spread over coverage, the last (coverage 1) kept."""
    kept: list[OperatingPoint] = []
    for point in points:
        if not kept or point.coverage - kept[-1].coverage >= 1 / steps or point is points[-1]:
            kept.append(point)
    return kept


def calibrated_point(case_results: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any] | None:
    """The point chosen over the corpora's cases pooled, with its curve: per feature, the most precise
    point whose coverage of every corpus is at least ``MIN_COVERAGE + COVERAGE_MARGIN``; the most
    precise of those. None without suggestions or without such a point."""
    per_corpus = {name: _records(cases) for name, cases in case_results.items()}
    pooled = [record for records in per_corpus.values() for record in records]
    if not pooled:
        return None
    exact = [(figures, right) for figures, right, _ in pooled]
    best: tuple[OperatingPoint, list[OperatingPoint]] | None = None
    for feature in FEATURES:
        if not all(feature in figures for figures, _ in exact):
            continue  # a run from before the figure existed
        points = curve(exact, feature)
        eligible = [
            point
            for point in points
            if min(_coverage(records, point) for records in per_corpus.values() if records)
            >= MIN_COVERAGE + COVERAGE_MARGIN
        ]
        chosen = choose(eligible, 0.0)
        if chosen is not None and (best is None or chosen.precision > best[0].precision):
            best = (chosen, points)
    if best is None:
        return None
    chosen, points = best
    return {
        "chosen": _point(chosen, pooled),
        "coverage_by_corpus": {
            name: round(_coverage(records, chosen), 4) for name, records in per_corpus.items() if records
        },
        "points": [_point(point, pooled) for point in thinned(points)],
    }


def _coverage(records: Sequence[tuple[Mapping[str, float], bool, bool]], point: OperatingPoint) -> float:
    return sum(figures[point.feature] >= point.threshold for figures, _, _ in records) / len(records)


def shipped_point(model: str, case_results: Sequence[Mapping[str, Any]], path: Path = CALIBRATIONS) -> Any:
    """The point ``model`` ships with (``path``) on these cases: precision, coverage and the gain over
    no gate; None when the model has no calibration or made no suggestion."""
    calibration = load_calibrations(path).get(model)
    records = _records(case_results)
    if calibration is None or not records or not all(calibration.chosen.feature in f for f, _, _ in records):
        return None
    point = calibration.chosen
    shown = [right for figures, right, _ in records if figures[point.feature] >= point.threshold]
    without = sum(right for _, right, _ in records) / len(records)
    precision = sum(shown) / len(shown) if shown else 0.0
    return {
        "feature": point.feature,
        "threshold": round(point.threshold, 4),
        "precision": round(precision, 4),
        "coverage": round(len(shown) / len(records), 4),
        "precision_gain": round(precision / without, 2) if without else None,
    }


def calibrate(
    model: str,
    case_results: Mapping[str, Sequence[Mapping[str, Any]]],
    path: Path = CALIBRATIONS,
    later_lines: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The calibration of ``model`` from its cases per corpus (``calibrated_point``), written into
    ``path``; ``later_lines`` (``bench/block_curve.py``) beside it. What was not measured (no point
    found, no block cursors) keeps its earlier entry."""
    found = calibrated_point(case_results)
    existing = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    entry = dict(existing.get(model, {}))
    if found is not None:
        entry["measured_on"] = sorted(case_results)
        entry.update(found)
    if later_lines is not None:
        entry["later_lines"] = dict(later_lines)
    existing[model] = entry
    path.write_text(json.dumps(existing, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return entry


def calibrate_from_runs(paths: Sequence[Path], path: Path = CALIBRATIONS) -> str:
    """Pool the cases of earlier runs' ``--json`` files per corpus and write their model's calibration
    into ``path``: the gate's point, and the later-lines point from their block cursors pooled
    (``bench/block_curve.py``) when they have any (otherwise the earlier one stays); what was
    written, in words."""
    # block_curve imports this module (its curves are thinned here), so it is imported where used.
    from bench.block_curve import block_figures, later_lines_entry

    models: set[str] = set()
    cases: dict[str, list[Any]] = {}
    blocks: dict[str, list[Any]] = {}
    for run_path in paths:
        try:
            run = json.loads(run_path.read_text(encoding="utf-8"))
            models.add(str(run["model_name"]))
            for corpus in CORPORA:
                if corpus in run and not run[corpus].get("partial"):
                    found = run[corpus]["case_results"]
                    _records(found)  # every case readable, or the file is refused here, named
                    cases.setdefault(corpus, []).extend(found)
                    block_records = run[corpus].get("block_results", [])
                    block_figures(block_records)  # readable too
                    blocks.setdefault(corpus, []).extend(block_records)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            why = f"not a bench model --json file ({error})"
            raise CommandError(f"--calibrate-from {run_path}: {why}") from None
    if len(models) != 1:
        named = ", ".join(sorted(models))
        raise CommandError(f"--calibrate-from: the runs are of {len(models)} models ({named})")
    model = models.pop()
    if calibrated_point(cases) is None:
        raise CommandError("--calibrate-from: no point shows enough of every corpus; nothing written")
    later = later_lines_entry(blocks)
    entry = calibrate(model, cases, path, later_lines=later)
    counts = ", ".join(f"{name} {len(found)} cursors" for name, found in cases.items())
    said = (
        f"calibration of {model} from {len(paths)} runs ({counts}): {entry['chosen']}\n"
        f"  coverage by corpus: {entry['coverage_by_corpus']}"
    )
    if later is not None:
        block_counts = ", ".join(f"{name} {len(found)}" for name, found in blocks.items())
        said += f"\n  later lines from block cursors ({block_counts}): {later['chosen']}"
    return said


def report_lines(corpus: str, figures: Mapping[str, Any], baselines: Mapping[str, float]) -> list[str]:
    """A few lines of the gate's figures for the bench's report."""
    if not figures.get("suggestions"):
        return [f"  {corpus}: gate: no suggestions to judge"]
    chosen = figures["chosen"]
    lines = [
        f"  {corpus}: best gate on these cursors, first-line {chosen['feature']} log-probability >= "
        f"{chosen['threshold']}: "
        f"precision {chosen['precision']:.1%} at coverage {chosen['coverage']:.1%} "
        f"(without the gate {figures['precision_without_gate']:.1%}; {figures['precision_gain']}x), "
        f"parses {chosen['parses']:.1%}",
        "    baselines (no gate, coverage 100 %): "
        + ", ".join(f"{name} {value:.1%}" for name, value in baselines.items()),
    ]
    shipped = figures.get("shipped")
    if shipped is not None:
        lines.insert(
            1,
            f"    the shipped point ({shipped['feature']} >= {shipped['threshold']}) here: precision "
            f"{shipped['precision']:.1%} at coverage {shipped['coverage']:.1%} "
            f"({shipped['precision_gain']}x)",
        )
    for feature, entry in figures["features"].items():
        curve_text = " ".join(f"{p['coverage']:.0%}:{p['precision']:.0%}" for p in entry["curve"])
        lines.append(f"    {feature}: coverage:precision {curve_text}")
    return lines
