"""A small draft model that shares the target's tokenizer proposes k tokens autoregressively.

The draft has its own paged KV pool and prefix cache (a `KVCacheManager` over its own `ModelRunner`),
so a request whose prompt the draft has seen before costs the draft only the new tokens. Before each
proposal the draft's KV is reconciled with the sequence: positions where the tokens the draft was fed
still match the sequence are kept, the rest (rejected proposals) are truncated away.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from inference.config import SamplingParams
from inference.engine.errors import ResourceExhaustedError
from inference.engine.kv_cache import KVCacheManager
from inference.engine.model_runner import ModelRunner
from inference.sampling import sample_from, token_probabilities
from inference.spec_decode.proposer import Proposal


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


class DraftModelProposer:
    """Proposes with a draft model; owns the draft's per-sequence KV state."""

    name = "draft"
    free = False  # each proposed token costs a draft forward pass

    def __init__(self, runner: ModelRunner, kv: KVCacheManager, target_vocab_size: int) -> None:
        self.runner = runner
        self.kv = kv
        self.target_vocab_size = target_vocab_size
        self._fed: dict[str, list[int]] = {}  # tokens whose K/V sit in the draft's pool, per sequence

    def propose(
        self,
        seq_id: str,
        token_ids: Sequence[int],
        k: int,
        params: SamplingParams,
        generator: torch.Generator,
    ) -> Proposal | None:
        """k tokens from the draft (greedy, or drawn from its processed distribution when sampling)."""
        length = len(token_ids)
        k = min(k, self.runner.config.max_position_embeddings - length + 1)
        if k < 1:
            return None
        try:
            self._sync(seq_id, token_ids)
            fed = self._fed[seq_id]
            self.kv.ensure_capacity(seq_id, length + k - 1)
        except ResourceExhaustedError:
            self.release(seq_id)  # the draft's pool is full: propose nothing, the target carries on
            return None
        if len(fed) >= length:
            return None  # nothing new since the last proposal: the engine never asks twice
        logits = self._feed(seq_id, list(token_ids[len(fed) :]), len(fed))
        fed.extend(token_ids[len(fed) :])
        self.kv.commit(seq_id, fed, len(fed))
        tokens: list[int] = []
        probs: list[torch.Tensor] = []
        for i in range(k):
            if params.greedy:
                token = int(logits.argmax().item())
            else:
                dist = token_probabilities(logits.unsqueeze(0), params)[0]  # (V_draft,)
                token = sample_from(dist, generator)
                probs.append(self._to_target_vocab(dist))
            tokens.append(token)
            if i < k - 1:
                logits = self._feed(seq_id, [token], length + i)
                fed.append(token)
        return Proposal(tokens, torch.stack(probs) if probs else None)

    def accept(self, seq_id: str, token_ids: Sequence[int]) -> None:
        """Drop the draft's K/V of rejected proposals now, returning their blocks early."""
        if seq_id in self._fed:
            self._sync(seq_id, token_ids)

    def release(self, seq_id: str) -> None:
        """Free the draft's blocks and state for a finished sequence."""
        self.kv.free(seq_id, self._fed.pop(seq_id, []))

    def _sync(self, seq_id: str, token_ids: Sequence[int]) -> None:
        """Make the draft's fed tokens a prefix of the sequence (allocating on first sight)."""
        fed = self._fed.get(seq_id)
        if fed is None:
            reused = self.kv.allocate_sequence(seq_id, token_ids)
            self._fed[seq_id] = list(token_ids[:reused])
            return
        valid = _common_prefix(fed, token_ids)
        if valid < len(fed):
            del fed[valid:]
            self.kv.truncate(seq_id, valid)

    def _feed(self, seq_id: str, tokens: list[int], start: int) -> torch.Tensor:
        """Run the draft on tokens at positions start..; returns the last row of logits (V_draft,)."""
        end = start + len(tokens)
        self.kv.ensure_capacity(seq_id, end)
        table = self.kv.block_table(seq_id)
        return self.runner.forward(tokens, start, table, self.kv.slots(seq_id, start, end))[0]

    def _to_target_vocab(self, dist: torch.Tensor) -> torch.Tensor:
        """Pad or cut the draft's distribution to the target's vocabulary (padded sizes may differ)."""
        size = dist.shape[0]
        if size == self.target_vocab_size:
            return dist
        if size > self.target_vocab_size:
            return dist[: self.target_vocab_size]
        return torch.nn.functional.pad(dist, (0, self.target_vocab_size - size))
