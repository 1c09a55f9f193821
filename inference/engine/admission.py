"""Admission and release of KV blocks: a waiting request's blocks, preempting running requests when
the pool is short, and giving a stopped request's blocks back.

When the KV pool runs dry (after evicting cached blocks), the lowest-priority, latest running request
is preempted: its computed blocks go back to the cache and it waits to be readmitted, when it mostly
reuses them. A completion that arrives to a full pool preempts running generations the same way;
other requests wait for blocks. `LLMEngine` decides when to call these; this module holds how
(and in which order waiting requests are admitted).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from inference.engine.errors import ResourceExhaustedError
from inference.engine.kv_cache import KVCacheManager
from inference.engine.scheduler import Scheduler
from inference.engine.sequence import SeqStatus, Sequence
from inference.spec_decode.proposer import Proposer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Allocation:
    """What allocating a waiting request's blocks came to: admitted (reusing ``reused_tokens`` cached
    tokens), told to wait for running requests to give blocks back, or failed with ``error``."""

    reused_tokens: int = 0
    waits: bool = False
    error: ResourceExhaustedError | None = None


class SequenceAdmission:
    """Allocates the blocks of requests being admitted, preempts running requests to make room, and
    releases the blocks of requests that stop running (keeping what they computed in the cache).

    `paused` is set by a preemption and cleared by the engine when a request finishes:
    readmitting the preempted request before blocks are really returned would only preempt it again,
    step after step.
    """

    def __init__(self, kv: KVCacheManager, scheduler: Scheduler, proposers: dict[str, Proposer]) -> None:
        self.kv = kv
        self.scheduler = scheduler
        self.proposers = proposers
        self.preemptions = 0
        self.paused = False

    def admit_waiting(self, failed: Callable[[Sequence], None]) -> None:
        """Starts waiting requests, in the scheduler's admission order, while blocks last. One that
        does not fit even alone gets its ``error`` and goes to ``failed`` at once (the engine finishes
        it), so the requests after it see the pool and the pause as they are then."""
        for seq in self.scheduler.admission_order():
            if seq.status == SeqStatus.FINISHED:
                continue
            if self.paused and seq.metrics.preemptions and self.scheduler.running:
                break
            allocation = self.allocate(seq)
            if allocation.waits:
                break  # wait for running requests to give blocks back
            if allocation.error is not None:
                seq.error = allocation.error
                failed(seq)
                continue
            seq.num_computed = allocation.reused_tokens
            if not seq.metrics.preemptions:
                seq.metrics.reused_tokens = allocation.reused_tokens
                seq.metrics.queue_seconds = seq.elapsed()
            self.scheduler.start(seq)

    def allocate(self, seq: Sequence) -> Allocation:
        """Blocks for a waiting request: admitted with its reused tokens, waiting, or failed.

        A completion that finds the pool full takes blocks from running generations (they wait and
        recompute later, mostly from the cache); anything else waits for running requests to finish,
        and fails only when nothing else holds blocks.
        """
        while True:
            try:
                return Allocation(reused_tokens=self.kv.allocate_sequence(seq.request_id, seq.token_ids))
            except ResourceExhaustedError as exc:
                victim = self.scheduler.preemption_victim(lower_than=seq.priority)
                if victim is None:
                    return Allocation(waits=True) if self.scheduler.running else Allocation(error=exc)
                self._preempt(victim, seq)

    def preempt_for(self, seq: Sequence) -> bool:
        """Make room for `seq` by sending the least important running request back to waiting.

        Its computed blocks stay cached, so on readmission it mostly reuses them. Returns False when
        no other request holds blocks (then `seq` alone does not fit).
        """
        victim = self.scheduler.preemption_victim()
        if victim is None:
            return False
        self._preempt(victim, seq)
        return True

    def _preempt(self, victim: Sequence, beneficiary: Sequence) -> None:
        log.info("KV pool full: preempting %s for %s", victim.request_id, beneficiary.request_id)
        self.release_blocks(victim)
        self.scheduler.preempt(victim)
        self.preemptions += 1
        self.paused = True

    def release_blocks(self, seq: Sequence) -> None:
        """Free a request's KV blocks (and its proposers' state), caching what it computed."""
        if seq.request_id in self.kv:
            # Keep what was computed (prompt and output) for the next request, then let go.
            computed = min(seq.num_computed, len(seq.token_ids))
            self.kv.free(seq.request_id, seq.token_ids[:computed])
        for proposer in self.proposers.values():
            proposer.release(seq.request_id)
