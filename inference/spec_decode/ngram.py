"""Prompt lookup: propose the tokens that followed the latest earlier occurrence of the sequence's tail.

No model: strong whenever the output copies its input (edits, refactors, renames), free otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from inference.config import SamplingParams
from inference.spec_decode.proposer import Proposal


def find_continuation(token_ids: Sequence[int], k: int, ngram_max: int, ngram_min: int) -> list[int]:
    """Up to k tokens that followed the most recent earlier match of the longest matching tail n-gram.

    Tries n from ngram_max down to ngram_min; the tail itself is excluded, and a match needs at least
    one following token. Returns [] when nothing matches.
    """
    tokens = np.asarray(token_ids, dtype=np.int64)
    length = len(tokens)
    # Candidate match ends: earlier positions holding the last token. Each longer n only filters them,
    # so a step costs one vectorised comparison over the history plus work on the candidates.
    ends = np.flatnonzero(tokens[: length - 1] == tokens[length - 1])
    for n in range(min(ngram_max, length - 1), ngram_min - 1, -1):
        matched = ends[ends >= n - 1]
        for back in range(1, n):
            matched = matched[tokens[matched - back] == tokens[length - 1 - back]]
        if len(matched):
            follow = int(matched[-1]) + 1
            return tokens[follow : follow + k].tolist()
    return []


class PromptLookupProposer:
    """n-gram proposer over the prompt and the output so far (stateless)."""

    name = "ngram"

    def __init__(self, ngram_max: int = 4, ngram_min: int = 2) -> None:
        self.ngram_max = ngram_max
        self.ngram_min = ngram_min

    def propose(
        self,
        seq_id: str,
        token_ids: Sequence[int],
        k: int,
        params: SamplingParams,
        generator: torch.Generator,
    ) -> Proposal | None:
        """Up to k tokens copied from the history, or None when the tail occurs nowhere earlier."""
        tokens = find_continuation(token_ids, k, self.ngram_max, self.ngram_min)
        return Proposal(tokens) if tokens else None

    def accept(self, seq_id: str, token_ids: Sequence[int]) -> None:
        """Nothing to roll back."""

    def release(self, seq_id: str) -> None:
        """No per-sequence state."""
