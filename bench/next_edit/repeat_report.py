"""The figures of ``codedraft bench next-edit --repeats`` (edits by example), overall and per kind of
transformation, and their printout; and the command's run over the committed case files."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from bench.next_edit.cases import Case, load_cases
from bench.next_edit.mine_repeats import TUNED_ON, cases_file
from bench.next_edit.repeat_replay import Replayed, replay_all
from bench.next_edit.scoring import percentile


@dataclass(frozen=True)
class RepeatFigures:
    """Counts of one set of repeat cases (see ``repeat_replay.Replayed``)."""

    cases: int
    shown: int  # cases whose first request after the user's edit offered an edit
    accepted: int
    right: int
    sites: int
    sites_done: int
    tokens: int
    tokens_done: int
    reverts: int
    second_example: int  # cases where the user made a second example
    reviewed_shown: int  # edits shown to a user who dismisses the first wrong one (its rule stops)
    reviewed_right: int  # of them, right

    @property
    def reviewed_precision(self) -> float | None:
        return self.reviewed_right / self.reviewed_shown if self.reviewed_shown else None

    @property
    def precision(self) -> float | None:
        return self.right / self.accepted if self.accepted else None

    @property
    def site_recall(self) -> float | None:
        return self.sites_done / self.sites if self.sites else None

    @property
    def token_recall(self) -> float | None:
        return self.tokens_done / self.tokens if self.tokens else None


def figures_of(results: Sequence[Replayed]) -> RepeatFigures:
    return RepeatFigures(
        cases=len(results),
        shown=sum(r.shown for r in results),
        accepted=sum(r.accepted for r in results),
        right=sum(r.right for r in results),
        sites=sum(r.sites for r in results),
        sites_done=sum(r.sites_done for r in results),
        tokens=sum(r.to_predict for r in results),
        tokens_done=sum(r.predicted for r in results),
        reverts=sum(r.reverts for r in results),
        second_example=sum(r.examples > 1 for r in results),
        reviewed_shown=sum(len(_until_dismissed(r.outcomes)) for r in results),
        reviewed_right=sum(sum(_until_dismissed(r.outcomes)) for r in results),
    )


def _until_dismissed(outcomes: list[bool]) -> list[bool]:
    """The edits a user who dismisses the first wrong one is shown: up to it, it included."""
    return outcomes[: outcomes.index(False) + 1] if False in outcomes else outcomes


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def _ms(values: list[float]) -> str:
    p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
    return "n/a" if p50 is None or p95 is None else f"p50 {p50:.1f} ms, p95 {p95:.1f} ms ({len(values)})"


def print_repeat_figures(results: Sequence[Replayed]) -> None:
    """Prints the benchmark's table: per kind of transformation, then all repeat cases, the silence
    cases and the latencies."""
    repeats = [r for r in results if r.kind == "repeat"]
    silences = [r for r in results if r.kind == "silence"]
    kinds = sorted({r.change or "?" for r in repeats})
    print(
        f"{'kind of transformation':<24}{'cases':>6}{'shown':>6}{'precision':>17}{'sites':>18}{'tokens':>18}"
    )
    for label, group in [
        *((k, [r for r in repeats if (r.change or "?") == k]) for k in kinds),
        ("all", repeats),
    ]:
        f = figures_of(group)
        print(
            f"  {label:<22}{f.cases:>6}{f.shown:>6}"
            f"{f'{_percent(f.precision)} ({f.right}/{f.accepted})':>17}"
            f"{f'{_percent(f.site_recall)} ({f.sites_done}/{f.sites})':>18}"
            f"{f'{_percent(f.token_recall)} ({f.tokens_done}/{f.tokens})':>18}"
        )
    f = figures_of(repeats)
    print(
        f"a second example typed in {f.second_example} repeat cases; reverts of the user's edit: {f.reverts}"
    )
    print(
        "a user dismissing the first wrong edit (its rule stops) is shown: precision "
        f"{_percent(f.reviewed_precision)} ({f.reviewed_right}/{f.reviewed_shown})"
    )
    quiet = sum(not r.shown for r in silences)
    wrong = sum(r.accepted for r in silences)
    share = _percent(quiet / len(silences) if silences else None)
    print(f"quiet after a one-change commit: {share} ({quiet}/{len(silences)}; {wrong} edits accepted there)")
    print(f"first answer after the user's edit: {_ms([ms for r in results for ms in r.first_ms])}")
    print(f"after each accept:                  {_ms([ms for r in results for ms in r.chain_ms])}")


def run(names: Sequence[str], limit: int | None, max_chain: int) -> list[Replayed]:
    """Replays the committed cases of the repositories ``names`` (when empty, all but the held-out
    ones) and prints the figures; returns the results."""
    names = list(names) or list(TUNED_ON)
    cases: list[Case] = []
    for name in names:
        found = load_cases(cases_file(name))
        for kind in ("repeat", "silence"):
            cases += [c for c in found if c.kind == kind][:limit]
    print(f"codedraft bench next-edit --repeats: {len(cases)} cases from {', '.join(names)}")
    load = os.getloadavg()[0]
    results = replay_all(cases, max_chain)
    print(f"load average (1 min): {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end")
    print_repeat_figures(results)
    return results
