"""Requests' units of work on the target model: a prefill chunk, a plain decode step, or a
speculative round (propose k, verify in one forward pass, keep the agreeing run plus one, roll back).

Prefill chunks and plain decode steps are planned first (`prefill`, `decode` return a `PlannedRows`)
and then run together, all sequences' rows in ONE batched forward pass (`run_batch`). A speculative
round keeps its own forward pass, run at once by `decode`: its proposal depends on the sequence's last
token, its length on the pool, and mode auto compares its measured cost with the price of a plain
step, which a shared pass would blur. Each sequence's attention reads only its own blocks, so its
tokens are those it gets alone (up to the last bits of the batched matrix products, see the tests).

Rollback is bookkeeping only: rejected proposals' K/V stay in their slots until overwritten, the
sequence's computed count stops before them, and tail blocks past the sequence are returned.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch

from inference.engine.confidence import token_logprob
from inference.engine.errors import EngineError, ResourceExhaustedError
from inference.engine.healing_constraint import constrained
from inference.engine.kv_cache import KVCacheManager
from inference.engine.model_runner import ForwardRows, ModelRunner
from inference.engine.sequence import FinishReason, Sequence
from inference.models.base import ForwardInterrupted
from inference.sampling import choose_token, token_probabilities
from inference.spec_decode.controller import choose_proposal
from inference.spec_decode.proposer import Proposal, Proposer
from inference.spec_decode.round_costs import PLAIN, RoundCosts
from inference.spec_decode.verify import verify_greedy, verify_sampled


@dataclass
class PlannedRows:
    """A sequence's rows of the next batched pass and what to do with their logits."""

    seq: Sequence
    rows: ForwardRows
    finish: Callable[[torch.Tensor], None]


class SequenceRunner:
    """Advances sequences on the target; the engine decides which and when."""

    def __init__(
        self,
        target: ModelRunner,
        kv: KVCacheManager,
        proposers: Mapping[str, Proposer],
        eos_ids: frozenset[int],
    ) -> None:
        self.target = target
        self.kv = kv
        self.proposers = proposers
        self.eos_ids = eos_ids
        self.max_len = target.config.max_position_embeddings
        # Measured costs of recent rounds, plain and speculative: what speculation must beat.
        self.costs = RoundCosts()

    def prefill(self, seq: Sequence, num_tokens: int) -> PlannedRows:
        """Plan the next `num_tokens` prompt tokens; after the last chunk, the first token is chosen."""
        start, end = seq.num_computed, seq.num_computed + num_tokens
        last = end == seq.prompt_len and seq.num_generated == 0

        def finish(logits: torch.Tensor) -> None:
            seq.metrics.computed_tokens += num_tokens
            seq.num_computed = end
            self.kv.commit(seq.request_id, seq.token_ids, end)
            if last:
                logits = constrained(seq.healing, logits, seq.output_ids)
                self._emit(seq, [choose_token(logits[0], seq.request.sampling, seq.generator)], logits)

        return PlannedRows(seq, self._rows(seq, seq.token_ids[start:end], start, int(last)), finish)

    def speculate(self, seq: Sequence) -> bool:
        """Runs a speculative round now, alone, when a proposer has something to offer that fits the
        pool; False when there is none (then the sequence takes a :meth:`plain_step`)."""
        started = time.perf_counter()
        chosen = self._propose(seq)
        if chosen is not None:
            chosen = self._fit_in_pool(seq, *chosen)
        if chosen is None:
            return False
        name, proposal = chosen
        accepted = self._speculative_round(seq, proposal)
        self.proposers[name].accept(seq.request_id, seq.token_ids)
        seq.controllers[name].record_round(proposal, accepted)
        self.costs.record(name, len(proposal.tokens) + 1, time.perf_counter() - started)
        return True

    def run_batch(self, planned: list[PlannedRows], interrupt: Callable[[], bool] | None = None) -> None:
        """Run the planned rows in one forward pass, then each sequence's own follow-up.

        A pass of plain decode steps only is the price of a plain step (each of its sequences waited
        that long for its token).
        An `EngineError` of one sequence's follow-up ends that sequence only (`seq.error`).
        A pass that `interrupt` stops between layers advances no sequence: their rows run again later.
        """
        if not planned:
            return
        started = time.perf_counter()
        try:
            all_logits = self.target.forward_batch([p.rows for p in planned], interrupt)
        except ForwardInterrupted:
            return
        if not any(p.seq.in_prefill for p in planned):
            self.costs.record(PLAIN, 1, time.perf_counter() - started)
        for p, logits in zip(planned, all_logits, strict=True):
            p.seq.metrics.target_forward_passes += 1
            try:
                p.finish(logits)
            except EngineError as exc:
                p.seq.error, p.seq.finish_reason = exc, FinishReason.ERROR

    def _propose(self, seq: Sequence) -> tuple[str, Proposal] | None:
        params = seq.request.sampling
        # Emitting accepted + 1 tokens must stay within max_tokens and the context window.
        k_cap = min(params.max_tokens - seq.num_generated - 1, self.max_len - len(seq.token_ids))
        return choose_proposal(
            seq.controllers,
            self.proposers,
            seq.request_id,
            seq.token_ids,
            k_cap,
            params,
            seq.generator,
            self.costs,
        )

    def _fit_in_pool(self, seq: Sequence, name: str, proposal: Proposal) -> tuple[str, Proposal] | None:
        """Shorten a proposal to the blocks the pool can give; None when only a plain step fits.

        Speculation must never be the reason a request is preempted or fails: verifying k tokens
        needs room for k more positions than a plain step does.
        """
        length = len(seq.token_ids)
        try:
            self.kv.ensure_capacity(seq.request_id, length + len(proposal.tokens))
            return name, proposal
        except ResourceExhaustedError:
            room = len(self.kv.block_table(seq.request_id)) * self.kv.block_size - length
            if room < 1:
                return None
            return name, proposal.truncated(room)

    def plain_step(self, seq: Sequence) -> PlannedRows:
        length = len(seq.token_ids)

        def finish(logits: torch.Tensor) -> None:
            seq.num_computed = length
            self.kv.commit(seq.request_id, seq.token_ids, length)
            logits = constrained(seq.healing, logits, seq.output_ids)
            self._emit(seq, [choose_token(logits[0], seq.request.sampling, seq.generator)], logits)

        return PlannedRows(seq, self._rows(seq, seq.token_ids[-1:], length - 1, 1), finish)

    def _speculative_round(self, seq: Sequence, proposal: Proposal) -> int:
        """Verify the proposal in one forward pass; returns how many proposed tokens were accepted."""
        params, length, drafts = seq.request.sampling, len(seq.token_ids), proposal.tokens
        logits = self._forward(seq, [seq.token_ids[-1], *drafts], length - 1, len(drafts) + 1)  # (k+1, V)
        logits = constrained(seq.healing, logits, seq.output_ids, drafts)
        if params.greedy:
            emitted = verify_greedy(logits, drafts)
        else:
            probs = token_probabilities(logits, params)  # (k+1, V)
            emitted = verify_sampled(probs, drafts, proposal.probs, seq.generator)
        accepted = len(emitted) - 1
        seq.metrics.spec_proposed += len(drafts)
        seq.metrics.spec_accepted += accepted
        # K/V is valid for the fed token and the accepted proposals; the rest is overwritten later.
        seq.num_computed = length + accepted
        self._emit(seq, emitted, logits)
        computed = min(seq.num_computed, len(seq.token_ids))
        self.kv.commit(seq.request_id, seq.token_ids, computed)
        self.kv.truncate(seq.request_id, max(len(seq.token_ids), computed))
        return accepted

    def _rows(self, seq: Sequence, tokens: list[int], start: int, num_logits: int) -> ForwardRows:
        """The sequence's rows of a forward pass, its block table grown to hold them."""
        end = start + len(tokens)
        self.kv.ensure_capacity(seq.request_id, end)
        table = self.kv.block_table(seq.request_id)
        return ForwardRows(tokens, start, list(table), self.kv.slots(seq.request_id, start, end), num_logits)

    def _forward(self, seq: Sequence, tokens: list[int], start: int, num_logits: int) -> torch.Tensor:
        rows = self._rows(seq, tokens, start, num_logits)
        logits = self.target.forward(rows.token_ids, rows.start_pos, rows.block_table, rows.slots, num_logits)
        seq.metrics.target_forward_passes += 1
        return logits

    def _emit(self, seq: Sequence, tokens: list[int], logits: torch.Tensor) -> None:
        """Append chosen tokens, stream their text, and stop at the first finishing condition.

        ``logits`` holds the row each token was chosen from; the exactness tests wrap this method to
        compare those rows (cache hit against miss, speculative against plain)."""
        params = seq.request.sampling
        for row, token in enumerate(tokens):
            now = time.perf_counter()
            if seq.first_token_time is None:
                seq.first_token_time = now
                seq.metrics.time_to_first_token = now - seq.arrival_time
            seq.last_token_time = now
            seq.token_ids.append(token)
            seq.metrics.generated_tokens += 1
            if token in params.stop_token_ids:
                seq.finish_reason = FinishReason.STOP
            elif token in self.eos_ids and not params.ignore_eos:
                seq.finish_reason = FinishReason.EOS
            else:
                seq.pending_tokens.append(token)
                text = seq.stream.push(token)
                seq.confidence.push(token_logprob(logits[row], token), text)
                seq.pending_text.append(text if seq.repetition is None else seq.repetition.push(token, text))
                if seq.stream.stopped:
                    seq.finish_reason = FinishReason.STOP
                elif seq.repetition is not None and seq.repetition.loop is not None:
                    seq.finish_reason = FinishReason.REPETITION
                elif seq.num_generated >= params.max_tokens or len(seq.token_ids) >= self.max_len:
                    seq.finish_reason = FinishReason.LENGTH
            if seq.finish_reason is not None:
                return
