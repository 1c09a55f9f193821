"""How often a proposer's tokens are accepted, counted in tokens (no clocks), and what that is worth.

Model: each proposed token is accepted with probability `a` once the ones before it were (geometric),
so a proposal of n tokens yields 1 + a + a^2 + ... + a^n tokens in expectation (the target always
adds one of its own). `a` is estimated per match-length bucket of prompt lookup (a tail matched over
20 tokens is a copy in progress; a 2-token match is a guess) from decayed counts of accepted tokens
and rejections, starting from a sceptical prior, so speculation has to earn its first rounds.

Prompt lookup is free to ask, so a proposal that was not verified is still scored: the tokens the
target went on to emit show how much of it would have been accepted (a shadow round).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# Upper bounds of prompt lookup's match-length buckets (1..4); bucket 0 holds a model's proposals.
_BUCKET_EDGES = (2, 5, 11)
_DECAY = 0.94  # per counted token: about the last 16 trials carry an estimate
# Prior (accepted, rejected) counts: a draft model sharing the tokenizer is usually right about half
# the time or more; prompt lookup has to show that the output copies before it is trusted.
_MODEL_PRIOR = (1.0, 1.0)
_LOOKUP_PRIOR = (0.25, 1.0)
# A bucket's own counts weigh against this many pseudo-trials at prompt lookup's overall rate, so a
# copy in progress (its match growing one bucket to the next) is trusted in a bucket it has not been
# seen in yet.
_POOL_WEIGHT = 2.0


def bucket_of(match_len: int | None) -> int:
    """The acceptance bucket of a proposal whose tail matched over `match_len` tokens (None: a model)."""
    if match_len is None:
        return 0
    return 1 + sum(match_len > edge for edge in _BUCKET_EDGES)


def expected_tokens(rate: float, n: int) -> float:
    """Tokens a round verifying n proposals emits in expectation: 1 + rate + ... + rate^n."""
    return sum(rate**i for i in range(n + 1))


class AcceptanceStats:
    """Decayed counts of accepted tokens and rejections: per match-length bucket, and for prompt
    lookup as a whole (index -1)."""

    def __init__(self) -> None:
        buckets = len(_BUCKET_EDGES) + 2
        self._accepted = [_MODEL_PRIOR[0]] + [0.0] * (buckets - 1) + [_LOOKUP_PRIOR[0]]
        self._rejected = [_MODEL_PRIOR[1]] + [0.0] * (buckets - 1) + [_LOOKUP_PRIOR[1]]

    def rate(self, match_len: int | None) -> float:
        """Estimated probability that a proposed token is accepted, given the ones before it were."""
        b = bucket_of(match_len)
        if b == 0:
            return self._accepted[0] / (self._accepted[0] + self._rejected[0])
        pooled = self._accepted[-1] / (self._accepted[-1] + self._rejected[-1])
        trials = self._accepted[b] + self._rejected[b]
        return (self._accepted[b] + _POOL_WEIGHT * pooled) / (trials + _POOL_WEIGHT)

    def count(self, match_len: int | None, accepted: int, rejected: bool) -> None:
        """Count `accepted` tokens and, when the proposal was cut short by the target, one rejection."""
        b = bucket_of(match_len)
        for index in {b, -1 if b else 0}:
            for outcome in [True] * accepted + [False] * rejected:
                self._accepted[index] = self._accepted[index] * _DECAY + outcome
                self._rejected[index] = self._rejected[index] * _DECAY + (not outcome)


@dataclass
class ShadowRound:
    """A proposal that was not verified, scored token by token against what the target emitted."""

    start: int  # index in the sequence of the first proposed token
    tokens: list[int]
    match_len: int | None
    scored: int = 0

    def score(self, token_ids: Sequence[int], stats: AcceptanceStats) -> bool:
        """Count the newly emitted tokens against the proposal; True once the shadow is settled."""
        emitted = token_ids[self.start + self.scored : self.start + len(self.tokens)]
        for token in emitted:
            if token != self.tokens[self.scored]:
                stats.count(self.match_len, 0, rejected=True)
                return True
            stats.count(self.match_len, 1, rejected=False)
            self.scored += 1
        return self.scored == len(self.tokens)
