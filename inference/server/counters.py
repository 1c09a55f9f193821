"""The daemon's counters since start, and the conversion of engine figures to wire figures."""

from __future__ import annotations

import time
from collections import deque

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.protocol import BackendStats
from inference.engine.sequence import FinishReason, RequestMetrics

THROUGHPUT_WINDOW_SECONDS = 60.0

FINISH_REASONS = {
    FinishReason.STOP: pb.FINISH_REASON_STOP,
    FinishReason.LENGTH: pb.FINISH_REASON_LENGTH,
    FinishReason.EOS: pb.FINISH_REASON_EOS,
    FinishReason.CANCELLED: pb.FINISH_REASON_CANCELLED,
    FinishReason.ERROR: pb.FINISH_REASON_ERROR,
    FinishReason.REPETITION: pb.FINISH_REASON_REPETITION,
}


def request_figures(
    metrics: RequestMetrics | None,
    truncated_tokens: int,
    first_token_ms: float | None,
    total_ms: float,
    max_tokens_clamped_to: int = 0,
) -> pb.RequestFigures:
    """The wire figures of one request. Times are measured by the daemon, from the call's arrival."""
    figures = pb.RequestFigures(
        truncated_tokens=truncated_tokens, total_ms=total_ms, max_tokens_clamped_to=max_tokens_clamped_to
    )
    if first_token_ms is not None:
        figures.time_to_first_token_ms = first_token_ms
    if metrics is None:
        return figures
    figures.prompt_tokens = metrics.prompt_tokens
    figures.reused_tokens = metrics.reused_tokens
    figures.computed_tokens = metrics.computed_tokens
    figures.generated_tokens = metrics.generated_tokens
    figures.decode_tokens_per_second = metrics.decode_tokens_per_s or 0.0
    figures.draft_proposed = metrics.spec_proposed
    figures.draft_accepted = metrics.spec_accepted
    figures.target_forward_passes = metrics.target_forward_passes
    figures.lines.extend(
        pb.LineConfidence(tokens=line.tokens, mean_logprob=line.mean_logprob, min_logprob=line.min_logprob)
        for line in metrics.lines
    )
    if metrics.first_token_logprob is not None:
        figures.first_token_logprob = metrics.first_token_logprob
    return figures


class DaemonCounters:
    """Totals since the daemon started; updated from the event loop only (no locking needed).

    A model's own counters name the daemon's as their `parent`: what they count, the parent counts too.
    """

    def __init__(self, parent: DaemonCounters | None = None) -> None:
        self.parent = parent
        self.started = time.monotonic()
        self.requests_total = 0
        self.requests_finished = 0
        self.requests_cancelled = 0
        self.cache_hit_requests = 0
        self.prompt_tokens = 0
        self.reused_tokens = 0
        self.computed_tokens = 0
        self.generated_tokens = 0
        self.draft_proposed = 0
        self.draft_accepted = 0
        self._recent_tokens: deque[tuple[float, int]] = deque()

    def arrived(self) -> None:
        """Count one request received."""
        self.requests_total += 1
        if self.parent is not None:
            self.parent.arrived()

    def tokens_generated(self, count: int) -> None:
        """Note `count` tokens streamed now (for tokens/s over the last minute)."""
        if count:
            self._recent_tokens.append((time.monotonic(), count))
        if self.parent is not None:
            self.parent.tokens_generated(count)

    def finished(self, metrics: RequestMetrics | None, cancelled: bool) -> None:
        """Add one ended request's figures."""
        if self.parent is not None:
            self.parent.finished(metrics, cancelled)
        self.requests_finished += 1
        self.requests_cancelled += int(cancelled)
        if metrics is None:
            return
        self.cache_hit_requests += int(metrics.reused_tokens > 0)
        self.prompt_tokens += metrics.prompt_tokens
        self.reused_tokens += metrics.reused_tokens
        self.computed_tokens += metrics.computed_tokens
        self.generated_tokens += metrics.generated_tokens
        self.draft_proposed += metrics.spec_proposed
        self.draft_accepted += metrics.spec_accepted

    def tokens_per_second(self) -> float:
        now = time.monotonic()
        while self._recent_tokens and self._recent_tokens[0][0] < now - THROUGHPUT_WINDOW_SECONDS:
            self._recent_tokens.popleft()
        window = min(THROUGHPUT_WINDOW_SECONDS, now - self.started)
        return sum(n for _, n in self._recent_tokens) / window if window > 0 else 0.0

    def to_proto(self, active: int, backend: BackendStats | None) -> pb.Stats:
        stats = pb.Stats(
            requests_total=self.requests_total,
            requests_finished=self.requests_finished,
            requests_active=active,
            requests_cancelled=self.requests_cancelled,
            cache_hit_requests=self.cache_hit_requests,
            prompt_tokens=self.prompt_tokens,
            reused_tokens=self.reused_tokens,
            computed_tokens=self.computed_tokens,
            generated_tokens=self.generated_tokens,
            draft_proposed=self.draft_proposed,
            draft_accepted=self.draft_accepted,
            tokens_per_second=self.tokens_per_second(),
            uptime_seconds=time.monotonic() - self.started,
        )
        if backend is not None:
            stats.queue_depth = backend.waiting
            stats.kv_blocks_total = backend.kv_blocks_total
            stats.kv_blocks_used = backend.kv_blocks_used
            stats.kv_blocks_cached = backend.kv_blocks_cached
            stats.preemptions = backend.preemptions
            stats.kv_evictions = backend.kv_evictions
        return stats
