"""Which requests run in a step, and how much of their prompt.

Policy, in plain Python:
* admission: waiting requests in (priority, arrival) order, completions first, up to `max_running`;
  a request that finds no room waits for running ones to finish (head of line, so none starves);
* each step gives every running request one unit of work: a prefill chunk of at most
  `prefill_chunk` tokens, or one decode round (one token, or one speculative round); prompt tokens are
  budgeted by `max_step_tokens` (by `decode_step_prompt_tokens` when a request of the step decodes:
  each of its tokens waits for the step's prompt chunks), completions served first; the engine runs the
  step's prefill chunks and plain decode steps in one batched forward pass;
* while a completion is still reading its prompt, generations wait: the editor's ghost text must not
  queue behind a long refactor, and one decode token of each generation per step would add up;
* but a generation gives way to completions for at most `GENERATION_WAIT_S` in a row (since it
  arrived or last got work): past that it ranks as a completion, by arrival, in admission, in the
  prompt budget and while completions read their prompts. A stream of completions cannot starve it
  (issue 28's cancel storm: with 16 clients a completion read its prompt in almost every step, and
  generations ran past a 120 s deadline); when steps are slower than the bound (a busy machine, long
  prompts), a generation gets its unit in every step, as completions do;
* prefills (a prompt computed ahead of a completion, RequestKind.PREFILL) fill an idle engine only:
  they get no work while any other request runs or waits, and read `background_prefill_chunk` tokens
  a step; a pass of prefills only stops between two layers when another request arrives (the engine's
  `interrupt`), so that request waits for one layer at most. Being the lowest
  priority, a prefill is the first to give its blocks back when the pool runs dry, and never takes
  blocks from another request.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from inference.config import EngineConfig, RequestKind
from inference.engine.sequence import PRIORITIES, SeqStatus, Sequence

GENERATION_WAIT_S = 0.5
"""How long in a row a generation may give way to completions (see the policy above)."""


@dataclass
class ScheduledWork:
    """One request's unit of work this step: `prefill_tokens` > 0 reads that much prompt, else decode."""

    seq: Sequence
    prefill_tokens: int


class Scheduler:
    """Holds the waiting and running requests and hands out the work of each step."""

    def __init__(self, config: EngineConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.waiting: list[Sequence] = []
        self.running: list[Sequence] = []
        self._clock = clock
        # Each generation's start of its wait: when it arrived, was preempted or last got work.
        self._waiting_since: dict[Sequence, float] = {}

    def add(self, seq: Sequence) -> None:
        """Queue a new request."""
        self.waiting.append(seq)
        if seq.request.kind is RequestKind.GENERATION:
            self._waiting_since[seq] = self._clock()

    def _rank(self, seq: Sequence, now: float) -> tuple[int, int]:
        """(priority, arrival); a generation that has waited `GENERATION_WAIT_S` ranks as a completion."""
        since = self._waiting_since.get(seq)
        overdue = since is not None and now - since >= GENERATION_WAIT_S
        return (PRIORITIES[RequestKind.COMPLETION] if overdue else seq.priority, seq.arrival)

    def remove(self, seq: Sequence) -> None:
        """Forget a finished request, wherever it is."""
        if seq in self.waiting:
            self.waiting.remove(seq)
        if seq in self.running:
            self.running.remove(seq)
        self._waiting_since.pop(seq, None)

    def admission_order(self) -> list[Sequence]:
        """Waiting requests in the order they should be admitted (stops at the running limit).

        Running prefills do not count against the limit for other requests: they get no work while
        another request waits or runs, so a completion kept out by them would wait forever. A prefill
        is admitted only below the limit, so at most `max_running` prefills run beside the others.
        """
        room_all = self.config.max_running - len(self.running)
        room = self.config.max_running - sum(
            1 for s in self.running if s.request.kind is not RequestKind.PREFILL
        )
        picked: list[Sequence] = []
        now = self._clock()
        for seq in sorted(self.waiting, key=lambda s: self._rank(s, now)):
            prefill = seq.request.kind is RequestKind.PREFILL
            if (room_all if prefill else room) <= 0:
                break
            picked.append(seq)
            room_all -= 1
            room -= 0 if prefill else 1
        return picked

    def preemption_victim(self, lower_than: int | None = None) -> Sequence | None:
        """The running request to give its blocks back when the pool runs dry: the lowest priority,
        then the latest arrival. For a running request that cannot grow (`lower_than` None) the victim
        may be itself, and there is none when it runs alone; for a waiting request only running
        requests of lower priority than `lower_than` qualify."""
        if lower_than is None:
            candidates = self.running if len(self.running) > 1 else []
        else:
            candidates = [s for s in self.running if s.priority > lower_than]
        return max(candidates, key=lambda s: (s.priority, s.arrival), default=None)

    def preempt(self, seq: Sequence) -> None:
        """Move a running request back to waiting (its KV blocks already released)."""
        self.running.remove(seq)
        if seq in self._waiting_since:
            self._waiting_since[seq] = self._clock()
        seq.status = SeqStatus.WAITING
        seq.num_computed = 0
        seq.metrics.preemptions += 1
        self.waiting.append(seq)

    def start(self, seq: Sequence) -> None:
        """Move an admitted request (its KV blocks allocated) to running."""
        self.waiting.remove(seq)
        seq.status = SeqStatus.RUNNING
        self.running.append(seq)

    def schedule(self) -> list[ScheduledWork]:
        """This step's work, highest priority first."""
        now = self._clock()
        ranks = {s: self._rank(s, now) for s in self.running}
        order = sorted(self.running, key=ranks.__getitem__)
        completion_reading = any(s.priority == 0 and s.in_prefill for s in order)
        others_busy = any(s.request.kind is not RequestKind.PREFILL for s in (*self.running, *self.waiting))
        decoding = any(
            not s.in_prefill and not (completion_reading and ranks[s][0] > 0)
            for s in order
            if s.request.kind is not RequestKind.PREFILL
        )
        budget = self.config.max_step_tokens
        if decoding:
            budget = min(budget, self.config.decode_step_prompt_tokens)
        work: list[ScheduledWork] = []
        for seq in order:
            if completion_reading and ranks[seq][0] > 0:
                continue
            background = seq.request.kind is RequestKind.PREFILL
            if background and others_busy:
                continue
            if seq.in_prefill:
                most = self.config.background_prefill_chunk if background else self.config.prefill_chunk
                chunk = min(most, self.config.prefill_chunk, seq.prefill_target - seq.num_computed, budget)
                if chunk <= 0:
                    continue
                budget -= chunk
                work.append(ScheduledWork(seq, chunk))
            else:
                work.append(ScheduledWork(seq, 0))
            if seq in self._waiting_since:
                self._waiting_since[seq] = now
        return work

    def has_work(self) -> bool:
        """Whether any request waits or runs."""
        return bool(self.waiting or self.running)
