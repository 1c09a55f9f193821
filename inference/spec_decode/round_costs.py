"""What a decode round costs on this machine, measured by the engine: the price speculation must beat.

A speculative round that verifies n rows costs more than a plain step (on a CPU a multiple of it
for a small model: a matrix product with a few rows is slower than a matrix-vector product), and
prompt lookup or a draft model adds its proposing time (figures: docs/benchmarks.md). The engine
records the wall time of every round by kind (`plain` or the proposer's name) and rows verified; the
controller asks for the ratio to a plain step.

Machine noise only ever slows a round down, and a shared machine is noisy in bursts, so each cost is
a low quantile of the recent samples, not a mean; plain steps are re-measured now and then so the
ratio never compares today's rounds with yesterday's plain steps.
"""

from __future__ import annotations

from collections import deque

import numpy as np

PLAIN = "plain"


class RoundCosts:
    """Recent round times by (kind, rows), shared by all requests of one engine."""

    def __init__(self, window: int = 24, min_samples: int = 3, plain_every: int = 48) -> None:
        self.window = window
        self.min_samples = min_samples
        self.plain_every = plain_every
        self._samples: dict[tuple[str, int], deque[float]] = {}
        self._rounds = 0
        self._last_plain = -plain_every

    def record(self, kind: str, rows: int, seconds: float) -> None:
        """One round of `kind` (PLAIN, or the proposer that proposed) that fed `rows` tokens."""
        self._samples.setdefault((kind, rows), deque(maxlen=self.window)).append(seconds)
        self._rounds += 1
        if kind == PLAIN:
            self._last_plain = self._rounds

    def wants_plain_sample(self) -> bool:
        """Whether a plain step should run now so the price of one stays measured and current."""
        enough = len(self._samples.get((PLAIN, 1), ())) >= self.min_samples
        return not enough or self._rounds - self._last_plain >= self.plain_every

    def ratio(self, kind: str, rows: int) -> float | None:
        """Estimated cost of a `kind` round verifying `rows` tokens over a plain step's; None until both
        are measured. Unmeasured row counts are interpolated between measured ones; beyond the longest
        measured round the cost goes on growing at the slope of the last two known points (a plain
        step counting as one row at its own cost), so a long round is not taken for as cheap as the
        longest one measured (on a CPU, a round of 100 rows costs about ten of 8). The estimate never
        falls as rows grow."""
        plain = self._estimate(PLAIN, 1)
        if plain is None:
            return None
        measured = sorted(
            (r, cost) for (k, r), _ in self._samples.items() if k == kind and (cost := self._estimate(k, r))
        )
        if not measured:
            return None
        rows_known = np.array([r for r, _ in measured], dtype=np.float64)
        costs = np.maximum.accumulate(np.array([c for _, c in measured], dtype=np.float64))
        if rows <= rows_known[-1]:
            return float(np.interp(rows, rows_known, costs)) / plain
        before_rows, before_cost = (rows_known[-2], costs[-2]) if len(measured) > 1 else (1.0, plain)
        slope = (
            max(0.0, (costs[-1] - before_cost) / (rows_known[-1] - before_rows))
            if rows_known[-1] > before_rows
            else 0.0
        )
        return float(costs[-1] + slope * (rows - rows_known[-1])) / plain

    def _estimate(self, kind: str, rows: int) -> float | None:
        samples = self._samples.get((kind, rows), ())
        if len(samples) < self.min_samples:
            return None
        return sorted(samples)[len(samples) // 4]
