"""Prompt lookup: propose the tokens that followed the earlier occurrence of the longest matching tail.

No model: strong whenever the output copies its input (edits, refactors, renames), free otherwise. The
longest matching tail (up to `ngram_max` tokens) picks the right place among repeated lines, and its
length says how much to trust the proposal (the controller keeps acceptance per match length).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from inference.config import SamplingParams
from inference.spec_decode.proposer import Proposal


@dataclass(frozen=True)
class Continuation:
    """What followed the chosen earlier match of the tail, and how many tail tokens matched."""

    tokens: list[int]
    match_len: int


def longest_match(token_ids: Sequence[int], k: int, ngram_max: int, ngram_min: int) -> Continuation | None:
    """Up to k tokens that followed the most recent earlier occurrence of the longest matching tail.

    The tail is matched over at most `ngram_max` tokens and must match at least `ngram_min`; the tail
    itself is excluded, and a match needs at least one following token. None when nothing matches.
    """
    tokens = np.asarray(token_ids, dtype=np.int64)
    length = len(tokens)
    if length < 2:
        return None
    # Candidate match ends: earlier positions holding the last token. Each step back filters them, so a
    # proposal costs one vectorised comparison over the history plus work on the survivors.
    matched = np.flatnonzero(tokens[: length - 1] == tokens[length - 1])
    best, best_len = matched, 1
    for back in range(1, min(ngram_max, length - 1)):
        matched = matched[matched >= back]
        matched = matched[tokens[matched - back] == tokens[length - 1 - back]]
        if not len(matched):
            break
        best, best_len = matched, back + 1
    if best_len < ngram_min or not len(best):
        return None
    follow = int(best[-1]) + 1
    return Continuation(tokens[follow : follow + k].tolist(), best_len)


class PromptLookupProposer:
    """n-gram proposer over the prompt and the output so far (stateless)."""

    name = "ngram"
    free = True  # a lookup in the history, no model

    def __init__(self, ngram_max: int = 64, ngram_min: int = 2) -> None:
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
        found = longest_match(token_ids, k, self.ngram_max, self.ngram_min)
        if found is None or not found.tokens:
            return None
        return Proposal(found.tokens, match_len=found.match_len)

    def accept(self, seq_id: str, token_ids: Sequence[int]) -> None:
        """Nothing to roll back."""

    def release(self, seq_id: str) -> None:
        """No per-sequence state."""
