"""The figures of ``codedraft bench next-edit`` from the replayed steps and rename chains, and their
printout."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass

from bench.next_edit.replay import Chain, Step
from bench.next_edit.scoring import (
    code_rename_counts,
    is_exact,
    is_revert,
    line_f1,
    line_precision,
    percentile,
    rename_counts,
)


@dataclass(frozen=True)
class Figures:
    """Shares are 0..1, None where nothing was there to count."""

    to_predict: int  # steps (multi and silence cases) with a true next change left
    exact: float | None  # of those, the share answered with exactly the true next change
    shown: float | None  # of those, the share answered with any edit
    line_f1: float | None  # mean over those (no answer: 0)
    line_precision: float | None  # mean over the answers given there
    to_stay_quiet: int  # steps with nothing left (the last block of a case)
    quiet: float | None  # of those, the share answered with no edit
    answers: int  # steps of every kind answered with an edit
    reverts: float | None  # of those, the share undoing the user's own last edit
    rename_precision: float | None  # over occurrences, all rename chains together
    rename_recall: float | None
    rename_code_recall: float | None  # over the occurrences that are code (no comments, strings)
    rename_first_shown: float | None  # rename cases whose first request offered an edit
    latency_ms: dict[str, tuple[float | None, float | None, int]]  # label: (p50, p90, count)
    prompt_tokens: float | None  # median prompt tokens per model call (the daemon's count)
    computed_tokens: float | None  # median prompt tokens computed (not reused from the KV cache)
    model_calls: int  # requests that asked the daemon
    finished_calls: int  # of those, the ones the daemon finished (counted in its totals)
    quiet_reasons: dict[str, int]  # why the server stayed quiet (codedraft/status), most common first
    errors: int  # requests the server answered with an error (scored as no answer)


def _share(hits: list[bool]) -> float | None:
    return sum(hits) / len(hits) if hits else None


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _latencies(values: list[float]) -> tuple[float | None, float | None, int]:
    return percentile(values, 0.5), percentile(values, 0.9), len(values)


def _per_call(step: Step, name: str) -> float | None:
    """The step's daemon figure ``name`` per model call; None when the model was not asked."""
    calls = step.figures.get("modelCalls", 0)
    return step.figures.get(name, 0) / calls if calls else None


def summarize(steps: list[Step], chains: list[Chain]) -> Figures:
    """The benchmark's figures (see :class:`Figures`)."""
    blocks = [s for s in steps if s.kind != "rename"]
    left = [s for s in blocks if s.truth != s.current]
    done = [s for s in blocks if s.truth == s.current]
    answered = [s for s in steps if s.predicted != s.current]
    counts = [rename_counts(c.current, c.final, c.truth) for c in chains]
    right, guessed, true = (sum(column) for column in zip(*counts, strict=True)) if counts else (0, 0, 0)
    code = [code_rename_counts(c.current, c.final, c.truth, c.old) for c in chains]
    code_right, code_true = (sum(column) for column in zip(*code, strict=True)) if code else (0, 0)
    firsts = [s for s in steps if s.kind == "rename"]
    asked = [s for s in steps if s.figures.get("modelCalls")]
    shown_model = [s.latency_ms for s in asked if s.number > 1 and s.edits]
    chained = [ms for c in chains for ms in c.latencies_ms]
    # A call the server abandoned (its deadline) adds nothing to the daemon's totals: left out.
    finished = [s for s in asked if s.figures.get("promptTokens")]
    prompts = [v for s in finished if (v := _per_call(s, "promptTokens")) is not None]
    computed = [v for s in finished if (v := _per_call(s, "computedTokens")) is not None]
    reasons = Counter(str(s.figures["quiet"]) for s in steps if "quiet" in s.figures)
    return Figures(
        to_predict=len(left),
        exact=_share([is_exact(s.current, s.predicted, s.nearest, s.truth) for s in left]),
        shown=_share([s.predicted != s.current for s in left]),
        line_f1=_mean([line_f1(s.current, s.predicted, s.nearest) for s in left]),
        line_precision=_mean(
            [p for s in left if (p := line_precision(s.current, s.predicted, s.truth)) is not None]
        ),
        to_stay_quiet=len(done),
        quiet=_share([s.predicted == s.current for s in done]),
        answers=len(answered),
        reverts=_share([is_revert(s.user_before, s.current, s.predicted) for s in answered]),
        rename_precision=right / guessed if guessed else None,
        rename_recall=right / true if true else None,
        rename_code_recall=code_right / code_true if code_true else None,
        rename_first_shown=_share([s.predicted != s.current for s in firsts]),
        latency_ms={
            "cold (first request on the file)": _latencies([s.latency_ms for s in steps if s.number == 1]),
            "warm (later requests on the file)": _latencies([s.latency_ms for s in steps if s.number > 1]),
            "model asked, cold": _latencies([s.latency_ms for s in asked if s.number == 1]),
            "model asked, warm": _latencies([s.latency_ms for s in asked if s.number > 1]),
            "model asked, warm, an edit shown": _latencies(shown_model),
            "rename chain, after each accept": _latencies(chained),
        },
        prompt_tokens=statistics.median(prompts) if prompts else None,
        computed_tokens=statistics.median(computed) if computed else None,
        model_calls=len(asked),
        finished_calls=len(finished),
        quiet_reasons=dict(reasons.most_common()),
        errors=sum("error" in s.figures for s in steps),
    )


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def print_figures(figures: Figures) -> None:
    """Prints the figures as the benchmark's result table."""
    if figures.errors:
        print(f"ERRORS: {figures.errors} requests failed (scored as no answer)")
    print(f"model predictions ({figures.to_predict} requests with a true next change left):")
    print(f"  exact next edit              {_percent(figures.exact)}")
    print(f"  shown (any edit)             {_percent(figures.shown)}")
    f1 = "n/a" if figures.line_f1 is None else f"{figures.line_f1:.3f}"
    print(f"  line F1 vs the nearest true change (no answer: 0)   {f1}")
    print(f"  line precision of the answers vs all remaining changes   {_percent(figures.line_precision)}")
    print(f"quiet where nothing is left ({figures.to_stay_quiet} requests): {_percent(figures.quiet)}")
    print(f"reverts of the user's own edit ({figures.answers} answers): {_percent(figures.reverts)}")
    print(
        f"rename propagation over occurrences: precision {_percent(figures.rename_precision)}, "
        f"recall {_percent(figures.rename_recall)} (of the occurrences in code: "
        f"{_percent(figures.rename_code_recall)}); first request offered an edit "
        f"{_percent(figures.rename_first_shown)}"
    )
    print(f"{'latency from the edit to the answer (ms)':<44}{'p50':>9}{'p90':>9}{'n':>6}")
    for label, (p50, p90, count) in figures.latency_ms.items():
        cells = "".join(f"{'n/a' if v is None else f'{v:.0f}':>9}" for v in (p50, p90))
        print(f"  {label:<42}{cells}{count:>6}")
    if figures.prompt_tokens is None:
        print(f"prompt tokens per model call: none of the {figures.model_calls} model calls finished")
    else:
        computed = "n/a" if figures.computed_tokens is None else f"{figures.computed_tokens:.0f}"
        print(
            f"prompt tokens per model call ({figures.finished_calls} of {figures.model_calls} calls "
            "finished), median: "
            f"{figures.prompt_tokens:.0f}, computed (not reused) {computed}"
        )
    for reason, count in figures.quiet_reasons.items():
        print(f"  quiet {count:>3}x: {reason}")
