"""The interface every proposer implements, and what a proposal carries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch

from inference.config import SamplingParams


@dataclass
class Proposal:
    """k proposed tokens; `probs` (k, V) are the distributions they were drawn from, or None when the
    proposer is deterministic (prompt lookup), which verification treats as point masses. `match_len`
    is how many tail tokens prompt lookup matched (None for a model's proposal)."""

    tokens: list[int]
    probs: torch.Tensor | None = None
    match_len: int | None = None

    def truncated(self, n: int) -> Proposal:
        """The first n proposed tokens (and their distributions)."""
        probs = None if self.probs is None else self.probs[:n]
        return Proposal(self.tokens[:n], probs, self.match_len)


class Proposer(Protocol):
    """Proposes up to k next tokens for a sequence; the target verifies them in one forward pass.

    `token_ids` is the whole sequence (prompt and output so far); the last token has been chosen but
    not yet fed to any model. After verification the engine calls `accept(seq_id, token_ids)` with the
    sequence as it now stands (accepted proposals and the target's own token appended), so a stateful
    proposer can roll back what was rejected; `release` drops all per-sequence state. `free` says
    whether proposing costs no model work, so a proposal may be asked for every step and scored
    without being verified.
    """

    name: str
    free: bool

    def propose(
        self,
        seq_id: str,
        token_ids: Sequence[int],
        k: int,
        params: SamplingParams,
        generator: torch.Generator,
    ) -> Proposal | None:
        """Up to k proposed next tokens, or None when there is nothing worth verifying."""
        ...

    def accept(self, seq_id: str, token_ids: Sequence[int]) -> None:
        """Learn which proposals survived (the sequence as it now stands)."""
        ...

    def release(self, seq_id: str) -> None:
        """Drop the state kept for a finished sequence."""
        ...
