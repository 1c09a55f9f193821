"""What one cancel storm found (:class:`PhaseResult`), the failures in it, and the printed report."""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass

from bench.storm_actions import ACTIONS, SHORT_DEADLINE_S, Outcome
from inference.api.codedraft.v1 import inference_pb2 as pb

IDLE_TIMEOUT_S = 30.0
"""How long the daemon may take to end every request of a storm once its clients are done."""


@dataclass(frozen=True)
class PoolCheck:
    """The measured daemon's stats once the storm was over: ``idle`` when no request was live or
    queued (within the wait), the KV blocks still held, and its request counters since it started."""

    idle: bool
    kv_blocks_used: int
    requests_total: int
    requests_finished: int


@dataclass(frozen=True)
class PhaseResult:
    """One storm: every request's outcome, the wall time, the measured and second daemons' generated
    tokens per second over it (None: no second daemon), requests the daemon received, the pool after
    it and how a fresh request ended."""

    phase: str
    outcomes: list[Outcome]
    wall_s: float
    tokens_per_s: float
    second_tokens_per_s: float | None
    requests_received: int
    pool: PoolCheck
    fresh: str

    @property
    def timed_out(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.timed_out]

    @property
    def unexpected(self) -> list[Outcome]:
        """Outcomes their action does not allow, other than the long-deadline timeouts."""
        return [o for o in self.outcomes if not o.expected and not o.timed_out]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


def failures(results: list[PhaseResult]) -> list[str]:
    """One line per thing that went wrong: timeouts, unexpected outcomes, a leaked or busy pool, requests
    left unfinished, a fresh request that did not finish."""
    found = []
    for result in results:
        name = result.phase
        timed_out = Counter(o.action for o in result.timed_out)
        for action, count in sorted(timed_out.items()):
            found.append(f"{name}: {count} {action} request(s) with the long deadline ran out of time")
        unexpected = Counter((o.action, o.outcome) for o in result.unexpected)
        for (action, outcome), count in sorted(unexpected.items()):
            found.append(f"{name}: {count} {action} request(s) ended {outcome!r}")
        pool = result.pool
        if not pool.idle:
            found.append(f"{name}: requests were still live {IDLE_TIMEOUT_S:g} s after the storm")
        if pool.kv_blocks_used:
            found.append(f"{name}: {pool.kv_blocks_used} KV blocks held with no request running")
        if pool.requests_finished != pool.requests_total:
            found.append(f"{name}: {pool.requests_total - pool.requests_finished} requests never finished")
        if result.fresh != "done":
            found.append(f"{name}: a fresh request after the storm ended {result.fresh!r}")
    return found


def print_report(info: pb.ModelInfo, args: argparse.Namespace, results: list[PhaseResult]) -> None:
    """The phases side by side, then the outcomes per action of each."""
    low, high = SHORT_DEADLINE_S
    print(
        f"codedraft bench cancel-storm: {info.model.name} ({info.model.parameters / 1e6:.1f}M parameters) "
        f"on {info.device} {info.dtype}; {args.requests} requests from {args.clients} clients per storm, "
        f"long deadline {args.deadline_s:g} s, short deadlines {low:g}-{high:g} s; the second daemon "
        f"with {args.second_clients} generating clients; beside {args.busy} busy core(s)"
    )
    header = [("phase", 7), ("requests", 9), ("received", 9), ("wall s", 7), ("tok/s", 6)]
    header += [("2nd tok/s", 10), ("done p50 ms", 12), ("p95 ms", 8), ("max ms", 8)]
    header += [("slowest long s", 15), ("timed out", 10), ("unexpected", 11), ("kv blocks", 10), ("fresh", 6)]
    print(" ".join(f"{name:>{width}}" for name, width in header))
    for r in results:
        done = [o.seconds * 1000 for o in r.outcomes if o.outcome == "done"]
        slowest = max((o.seconds for o in r.outcomes if o.long_deadline), default=0.0)
        second = "-" if r.second_tokens_per_s is None else f"{r.second_tokens_per_s:.1f}"
        cells = [
            f"{r.phase:>7}",
            f"{len(r.outcomes):>9}",
            f"{r.requests_received:>9}",
            f"{r.wall_s:>7.1f}",
            f"{r.tokens_per_s:>6.1f}",
            f"{second:>10}",
            f"{_percentile(done, 0.5):>12.0f}",
            f"{_percentile(done, 0.95):>8.0f}",
            f"{max(done, default=float('nan')):>8.0f}",
            f"{slowest:>15.1f}",
            f"{len(r.timed_out):>10}",
            f"{len(r.unexpected):>11}",
            f"{r.pool.kv_blocks_used if r.pool.idle else 'busy':>10}",
            f"{r.fresh if r.fresh == 'done' else 'FAILED':>6}",
        ]
        print(" ".join(cells))
    for r in results:
        print(f"outcomes per action, {r.phase}:")
        for action in ACTIONS:
            counts = Counter(o.outcome for o in r.outcomes if o.action == action)
            listed = ", ".join(f"{outcome} {n}" for outcome, n in sorted(counts.items()))
            print(f"  {action:<10} {sum(counts.values()):>4}: {listed}")
