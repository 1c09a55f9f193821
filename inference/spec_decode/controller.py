"""Per request: how many proposed tokens to verify, and (mode auto) whether verifying pays at all.

The decision is a comparison of two measured quantities, neither of them a noisy per-token clock:
the tokens a round is expected to emit (from acceptance counted in tokens, `acceptance.py`) and what
the round costs relative to a plain step (`round_costs.py`, robust to a shared machine's noise). A
round of n proposals is worth `expected_tokens(a, n) / ratio(n + 1)` plain steps per plain step's
time; the controller verifies the n that maximises it, and only when it beats plain decoding: in
mode auto by a margin that is wider for starting than for continuing (hysteresis), so the choice
does not flap on noise.

Prompt lookup is free to ask, so it is asked every step; a proposal that is not worth verifying is
scored in shadow against the tokens the target goes on to emit. A draft model costs forward passes
to ask, so in mode auto, when it does not pay, it is paused and probed again later (the pause
doubles after each probe that does not pay); mode draft always verifies it.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import replace

import torch

from inference.config import SamplingParams, SpecMode, SpeculationConfig
from inference.spec_decode.acceptance import AcceptanceStats, ShadowRound, expected_tokens
from inference.spec_decode.proposer import Proposal, Proposer
from inference.spec_decode.round_costs import RoundCosts

# Expected speed-up a round needs in mode auto: to start speculating, and to keep on.
_ENTER_GAIN = 1.15
_STAY_GAIN = 1.0


def prior_ratio(rows: int) -> float:
    """Cost of verifying `rows` tokens over a plain step before the engine has measured it: optimistic,
    so the first rounds that look worth it run and get measured."""
    return 1.0 + 0.1 * (rows - 1)


class SpeculationController:
    """Verification length and, when `can_pause` (mode auto), the on/off decision for one proposer
    of one request."""

    def __init__(self, config: SpeculationConfig, can_pause: bool) -> None:
        self.config = config
        self.can_pause = can_pause
        self.stats = AcceptanceStats()
        self.k = config.k_init  # the length last chosen
        self.speculating = False
        self._shadow: ShadowRound | None = None
        self._paused_steps = 0
        self._pause_length = config.probe_interval
        self._probe_next = False

    def best_length(
        self, match_len: int | None, limit: int, costs: RoundCosts, kind: str
    ) -> tuple[int, float]:
        """The number of proposals (1..limit) worth verifying, and that round's expected speed-up."""
        rate = self.stats.rate(match_len)
        best = (1, 0.0)
        for n in range(1, limit + 1):
            ratio = costs.ratio(kind, n + 1) or prior_ratio(n + 1)
            gain = expected_tokens(rate, n) / ratio
            if gain > best[1]:
                best = (n, gain)
        return best

    def observe(self, token_ids: Sequence[int]) -> None:
        """Score a pending shadow round against the tokens emitted since it was proposed."""
        if self._shadow is not None and self._shadow.score(token_ids, self.stats):
            self._shadow = None

    def request_length(self, k_cap: int, free: bool, costs: RoundCosts, kind: str) -> int:
        """How many tokens to ask the proposer for this step; 0 means do not ask (paused).

        A free proposer (prompt lookup) is asked for all it has and judged on its proposal; a model is
        judged before it is asked, from its acceptance so far.
        """
        limit = min(k_cap, self.config.k_max)
        if self._paused_steps > 0:
            self._paused_steps -= 1
            return 0
        if free:
            return limit
        n, gain = self.best_length(None, limit, costs, kind)
        if self.can_pause and not self._probe_next and gain < self._threshold():
            self._paused_steps = self._pause_length
            self._pause_length = min(2 * self._pause_length, 8 * self.config.probe_interval)
            self._probe_next = True
            self.speculating = False
            return 0
        if not self._probe_next:
            self._pause_length = self.config.probe_interval
        self._probe_next = False
        self.speculating = True
        self.k = n
        return n

    def verify_length(self, proposal: Proposal, position: int, costs: RoundCosts, kind: str) -> int:
        """How many of the proposal's tokens to verify; 0 keeps a lookup proposal that is not expected
        to pay as a shadow round (in a named mode too: verifying it would only slow the request down).

        `position` is the index the first proposed token would have in the sequence.
        """
        n, gain = self.best_length(proposal.match_len, len(proposal.tokens), costs, kind)
        if proposal.match_len is not None and gain < self._threshold():
            if self._shadow is None:
                self._shadow = ShadowRound(position, proposal.tokens, proposal.match_len)
            self.speculating = False
            return 0
        self._shadow = None  # the verified round counts these tokens itself
        self.speculating = True
        self.k = n
        return n

    def record_round(self, proposal: Proposal, accepted: int) -> None:
        """Count a verified round: `accepted` of the proposal's tokens were kept."""
        self.stats.count(proposal.match_len, accepted, rejected=accepted < len(proposal.tokens))

    def _threshold(self) -> float:
        return _ENTER_GAIN if self.can_pause and not self.speculating else _STAY_GAIN

    @property
    def paused(self) -> bool:
        """Whether asking this proposer is paused for this request now."""
        return self._paused_steps > 0


def controllers_for(
    mode: SpecMode, available: Container[str], config: SpeculationConfig, draft_limit: int | None = None
) -> dict[str, SpeculationController]:
    """One controller per proposer a request in `mode` may use, in the order they are tried.

    Mode auto tries prompt lookup first (free), then the draft model, and may pause either; a named
    mode uses its proposer only and never pauses; a missing proposer (no draft loaded) is skipped.
    `draft_limit` (a request's, when larger than `config.k_max`) bounds prompt lookup's rounds in
    place of k_max: a rewrite that copies a long text verifies its unchanged rest in few rounds. The
    cost rule still picks each round's length; a draft model keeps k_max (it pays per token).
    """
    names = {SpecMode.OFF: [], SpecMode.NGRAM: ["ngram"], SpecMode.DRAFT: ["draft"]}.get(
        mode, ["ngram", "draft"]
    )
    lookup = config
    if draft_limit is not None and draft_limit > config.k_max:
        lookup = replace(config, k_max=draft_limit)
    return {
        name: SpeculationController(lookup if name == "ngram" else config, can_pause=mode == SpecMode.AUTO)
        for name in names
        if name in available
    }


def choose_proposal(
    controllers: Mapping[str, SpeculationController],
    proposers: Mapping[str, Proposer],
    seq_id: str,
    token_ids: Sequence[int],
    k_cap: int,
    params: SamplingParams,
    generator: torch.Generator,
    costs: RoundCosts,
) -> tuple[str, Proposal] | None:
    """The proposal to verify this step (name of its proposer, tokens cut to the length worth
    verifying), or None for a plain step. `k_cap` bounds the proposal (max_tokens, context window)."""
    for controller in controllers.values():
        controller.observe(token_ids)
    if k_cap < 1 or not controllers:
        return None
    if any(c.can_pause for c in controllers.values()) and costs.wants_plain_sample():
        return None  # mode auto compares with plain steps, so it keeps their price measured
    for name, controller in controllers.items():
        proposer = proposers[name]
        k = controller.request_length(k_cap, proposer.free, costs, name)
        if k < 1:
            continue
        proposal = proposer.propose(seq_id, token_ids, k, params, generator)
        if proposal is None or not proposal.tokens:
            continue
        n = controller.verify_length(proposal.truncated(k), len(token_ids), costs, name)
        if n > 0:
            return name, proposal.truncated(n)
    return None
