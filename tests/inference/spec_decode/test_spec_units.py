"""Model-free parts of speculative decoding: prompt lookup, verification rules, acceptance counts,
round costs and the controller that weighs them."""

from __future__ import annotations

import pytest
import torch

from inference.config import SamplingParams, SpecMode, SpeculationConfig
from inference.spec_decode.acceptance import AcceptanceStats, ShadowRound, expected_tokens
from inference.spec_decode.controller import SpeculationController, controllers_for
from inference.spec_decode.ngram import PromptLookupProposer, longest_match
from inference.spec_decode.proposer import Proposal
from inference.spec_decode.round_costs import PLAIN, RoundCosts
from inference.spec_decode.verify import verify_greedy, verify_sampled


def _continuation(token_ids: list[int], k: int, ngram_max: int, ngram_min: int) -> list[int]:
    found = longest_match(token_ids, k, ngram_max, ngram_min)
    return found.tokens if found is not None else []


def test_prompt_lookup_prefers_longest_then_latest_match() -> None:
    tokens = [1, 2, 3, 9, 9, 2, 3, 7, 8, 5, 1, 2, 3]
    # Tail [1, 2, 3] occurs at 0 -> continues with 9, 9; the 2-gram [2, 3] also occurs later (at 5).
    assert _continuation(tokens, 2, ngram_max=3, ngram_min=2) == [9, 9]
    assert _continuation(tokens, 4, ngram_max=2, ngram_min=2) == [7, 8, 5, 1]
    assert _continuation([4, 5, 6], 3, 3, 1) == []
    assert _continuation([5], 3, 3, 1) == []
    assert _continuation([5, 6, 5], 3, 3, 1) == [6, 5]  # truncated at the end of history
    proposer = PromptLookupProposer(3, 2)
    gen = torch.Generator()
    assert proposer.propose("s", [1, 2, 1, 2], 3, SamplingParams(), gen) is not None
    assert proposer.propose("s", [1, 2, 3, 4], 3, SamplingParams(), gen) is None


def test_verify_greedy_keeps_agreeing_run_plus_one() -> None:
    logits = torch.full((4, 10), -1.0)
    for row, best in enumerate([5, 6, 2, 8]):
        logits[row, best] = 1.0
    assert verify_greedy(logits, [5, 6, 7]) == [5, 6, 2]
    assert verify_greedy(logits, [5, 6, 2]) == [5, 6, 2, 8]
    assert verify_greedy(logits, [0, 6, 2]) == [5]
    assert verify_greedy(logits[:1], []) == [5]


def _chi_square(counts: torch.Tensor, probs: torch.Tensor) -> float:
    expected = probs * counts.sum()
    keep = expected > 0
    return float(((counts[keep] - expected[keep]) ** 2 / expected[keep]).sum())


def test_rejection_rule_reproduces_target_distribution() -> None:
    """First emitted token's law equals p_1, whatever q is (draft with probs, and a point mass)."""
    p = torch.tensor([[0.5, 0.2, 0.2, 0.1], [0.25, 0.25, 0.25, 0.25]])
    q = torch.tensor([[0.1, 0.6, 0.2, 0.1]])
    q_gen, v_gen = torch.Generator().manual_seed(1), torch.Generator().manual_seed(2)
    n = 8000
    counts_draft, counts_point = torch.zeros(4), torch.zeros(4)
    for _ in range(n):
        proposal = int(torch.multinomial(q[0], 1, generator=q_gen))
        counts_draft[verify_sampled(p, [proposal], q, v_gen)[0]] += 1
        counts_point[verify_sampled(p, [1], None, v_gen)[0]] += 1
    # 3 degrees of freedom: the 0.999 quantile is 16.27.
    assert _chi_square(counts_draft, p[0]) < 16.27
    assert _chi_square(counts_point, p[0]) < 16.27
    # And the test can fail: the draft's own law is far from p.
    assert _chi_square(counts_draft, q[0]) > 100


def test_longest_match_reports_its_length_and_picks_the_right_repeat() -> None:
    # "a b c x" then "q b c y": the tail "a b c" matches the first only, though "b c" is more recent.
    tokens = [1, 2, 3, 7, 5, 2, 3, 8, 9, 1, 2, 3]
    found = longest_match(tokens, 3, ngram_max=64, ngram_min=2)
    assert found is not None and found.tokens == [7, 5, 2] and found.match_len == 3
    capped = longest_match(tokens, 3, ngram_max=2, ngram_min=2)
    assert capped is not None and capped.tokens == [8, 9, 1] and capped.match_len == 2
    assert longest_match([1, 2, 3, 4, 3], 2, ngram_max=8, ngram_min=2) is None  # 1-token match only
    proposal = PromptLookupProposer(64, 2).propose("s", tokens, 2, SamplingParams(), torch.Generator())
    assert proposal is not None and proposal.tokens == [7, 5] and proposal.match_len == 3


def test_acceptance_rate_learns_from_tokens_and_shares_across_match_lengths() -> None:
    stats = AcceptanceStats()
    assert stats.rate(3) == pytest.approx(0.2)  # sceptical prior of prompt lookup
    assert stats.rate(None) == pytest.approx(0.5)  # a draft model's prior
    stats.count(20, accepted=8, rejected=False)  # a copy: all 8 accepted
    assert stats.rate(40) == pytest.approx(0.98028560)
    assert stats.rate(3) == pytest.approx(0.91614297)  # a shorter match, never seen, is trusted too
    assert stats.rate(None) == pytest.approx(0.5)  # a model's proposals are counted apart
    for _ in range(6):
        stats.count(2, accepted=0, rejected=True)
    assert stats.rate(2) == pytest.approx(0.12586172)  # below the prior: short matches failed
    assert stats.rate(20) == pytest.approx(0.87096579)  # long matches keep most of their trust
    assert expected_tokens(1.0, 4) == 5.0
    assert expected_tokens(0.5, 2) == 1.75


def test_shadow_round_scores_tokens_as_they_are_emitted() -> None:
    stats = AcceptanceStats()
    shadow = ShadowRound(start=3, tokens=[7, 8, 9], match_len=4)
    assert not shadow.score([1, 2, 3], stats)  # nothing emitted yet
    assert not shadow.score([1, 2, 3, 7], stats)
    assert not shadow.score([1, 2, 3, 7, 8], stats)
    assert shadow.score([1, 2, 3, 7, 8, 9], stats)  # all three would have been accepted
    before = stats.rate(4)
    assert ShadowRound(start=0, tokens=[5, 6], match_len=4).score([5, 0], stats)  # settled by a miss
    assert stats.rate(4) < before


def test_round_costs_are_robust_to_noise_and_interpolated() -> None:
    costs = RoundCosts(window=8, min_samples=3, plain_every=4)
    assert costs.wants_plain_sample() and costs.ratio("ngram", 5) is None
    for seconds in (0.010, 0.050, 0.010, 0.011):  # one step slowed 5x by another process
        costs.record(PLAIN, 1, seconds)
    assert not costs.wants_plain_sample()
    assert costs.ratio("ngram", 5) is None  # no verify round measured yet
    for seconds in (0.020, 0.020, 0.090):
        costs.record("ngram", 3, seconds)
    for seconds in (0.030, 0.030, 0.030):
        costs.record("ngram", 9, seconds)
    assert costs.ratio("ngram", 3) == pytest.approx(2.0)
    assert costs.ratio("ngram", 6) == pytest.approx(2.5)  # between measured row counts
    # beyond them at the last two points' slope (1 plain step per 6 rows): not as cheap as 9 rows
    assert costs.ratio("ngram", 17) == pytest.approx(3.0 + 8 / 6)
    assert costs.ratio("draft", 3) is None
    assert costs.wants_plain_sample()  # 6 rounds since the last plain step: measure one again


def test_one_measured_round_length_extrapolates_from_the_plain_step() -> None:
    costs = RoundCosts(min_samples=1)
    costs.record(PLAIN, 1, 0.010)
    costs.record("ngram", 5, 0.030)  # 4 more rows cost 2 more plain steps
    assert costs.ratio("ngram", 3) == pytest.approx(3.0)  # at or below it: the measured cost, flat
    assert costs.ratio("ngram", 9) == pytest.approx(3.0 + 4 * 0.5)
    costs.record("ngram", 9, 0.030)  # as dear as 5 rows (a memory-bound device): no slope beyond
    assert costs.ratio("ngram", 40) == pytest.approx(3.0)


def _fixed_costs(ratio: float) -> RoundCosts:
    """Verifying 1 proposal costs `ratio` plain steps, 8 proposals 40 % more (as on a CPU)."""
    costs = RoundCosts(min_samples=1)
    costs.record(PLAIN, 1, 1.0)
    costs.record("ngram", 2, ratio)
    costs.record("ngram", 9, 1.4 * ratio)
    return costs


def test_controller_verifies_the_length_that_pays() -> None:
    ctl = SpeculationController(SpeculationConfig(k_max=8), can_pause=False)
    proposal = Proposal(list(range(8)), match_len=20)
    costs = _fixed_costs(2.0)
    assert ctl.verify_length(proposal, 0, costs, "ngram") == 0  # rate 0.2: not worth a verify round
    ctl.record_round(proposal, 8)
    ctl.record_round(proposal, 8)
    assert ctl.verify_length(proposal, 0, costs, "ngram") == 8  # a copy: all of it
    assert ctl.verify_length(Proposal(list(range(3)), match_len=20), 0, costs, "ngram") == 3
    cheap = SpeculationController(SpeculationConfig(k_max=8), can_pause=False)
    cheap.stats.count(20, accepted=1, rejected=True)
    assert cheap.stats.rate(20) == pytest.approx(0.43213734)
    assert cheap.verify_length(proposal, 0, _fixed_costs(0.9), "ngram") == 2  # a short round pays


def test_auto_declines_a_proposal_that_does_not_pay_and_scores_it_in_shadow() -> None:
    ctl = SpeculationController(SpeculationConfig(), can_pause=True)
    costs = _fixed_costs(2.0)
    proposal = Proposal([7, 8, 9, 10], match_len=6)
    assert ctl.verify_length(proposal, 5, costs, "ngram") == 0  # no evidence of a copy yet
    ctl.observe([0, 1, 2, 3, 4, 7])
    ctl.observe([0, 1, 2, 3, 4, 7, 8])  # the target wrote what lookup proposed
    assert ctl.verify_length(Proposal([9, 10, 11, 12], match_len=8), 7, costs, "ngram") == 4
    assert ctl.speculating


def test_auto_hysteresis_keeps_a_decision_on_marginal_evidence() -> None:
    """Between the start margin (1.15x) and the stop margin (1.0x) the previous decision stands."""
    costs = _fixed_costs(2.0)
    marginal = Proposal([1, 2], match_len=6)  # rate set so the round is worth about 1.1 plain steps
    for speculating, expected in ((False, 0), (True, 2)):
        ctl = SpeculationController(SpeculationConfig(), can_pause=True)
        ctl.speculating = speculating
        ctl.stats.count(6, accepted=20, rejected=False)
        for _ in range(4):
            ctl.stats.count(6, accepted=0, rejected=True)
        length, worth = ctl.best_length(6, 2, costs, "ngram")
        assert (length, worth) == (2, pytest.approx(1.05300853))  # between the stop and start margins
        assert ctl.verify_length(marginal, 0, costs, "ngram") == expected


def test_auto_pauses_a_model_proposer_that_does_not_pay_and_probes_again() -> None:
    ctl = SpeculationController(SpeculationConfig(probe_interval=3), can_pause=True)
    costs = RoundCosts(min_samples=1)
    costs.record(PLAIN, 1, 1.0)
    assert ctl.request_length(8, free=False, costs=costs, kind="draft") == 2  # not measured yet: try it
    costs.record("draft", 5, 3.0)  # the draft's forward passes make a round cost 3 plain steps
    ctl.stats.count(None, accepted=0, rejected=True)
    lengths = [ctl.request_length(8, free=False, costs=costs, kind="draft") for _ in range(5)]
    # paused 3 steps, then a probe of 4 (rounds longer than the 5 rows measured cost more, at the slope
    # from a plain step to them: 9 rows about 5 plain steps, for little more in expectation)
    assert lengths == [0, 0, 0, 0, 4]
    lengths = [ctl.request_length(8, free=False, costs=costs, kind="draft") for _ in range(8)]
    assert lengths == [0] * 7 + [4]  # the probe did not pay: pause doubled


def test_controller_in_fixed_mode_never_pauses() -> None:
    ctl = SpeculationController(SpeculationConfig(), can_pause=False)
    costs = _fixed_costs(50.0)
    for _ in range(5):
        ctl.stats.count(None, accepted=0, rejected=True)
    assert [ctl.request_length(4, free=False, costs=costs, kind="draft") for _ in range(5)] == [1] * 5


def test_a_requests_draft_limit_replaces_k_max_for_prompt_lookup_only() -> None:
    """A rewrite (PredictEdit) may verify as many looked-up tokens as its region has in one round; a
    draft model keeps k_max, and a limit below k_max changes nothing."""
    costs = RoundCosts()
    config = SpeculationConfig()
    for limit, lookup_tokens in ((None, 8), (3, 8), (40, 40), (200, 100)):
        controllers = controllers_for(SpecMode.AUTO, {"ngram", "draft"}, config, draft_limit=limit)
        assert controllers["ngram"].request_length(100, free=True, costs=costs, kind="ngram") == lookup_tokens
        assert controllers["draft"].config.k_max == 8
    assert config.k_max == 8  # the shared settings are untouched
