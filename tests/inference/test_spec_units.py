"""Model-free parts of speculative decoding: prompt lookup, verification rules, the k controller."""

from __future__ import annotations

import torch

from inference.config import SamplingParams, SpeculationConfig
from inference.spec_decode.controller import SpeculationController
from inference.spec_decode.ngram import PromptLookupProposer, find_continuation
from inference.spec_decode.verify import verify_greedy, verify_sampled


def test_prompt_lookup_prefers_longest_then_latest_match() -> None:
    tokens = [1, 2, 3, 9, 9, 2, 3, 7, 8, 5, 1, 2, 3]
    # Tail [1, 2, 3] occurs at 0 -> continues with 9, 9; the 2-gram [2, 3] also occurs later (at 5).
    assert find_continuation(tokens, 2, ngram_max=3, ngram_min=2) == [9, 9]
    assert find_continuation(tokens, 4, ngram_max=2, ngram_min=2) == [7, 8, 5, 1]
    assert find_continuation([4, 5, 6], 3, 3, 1) == []
    assert find_continuation([5], 3, 3, 1) == []
    assert find_continuation([5, 6, 5], 3, 3, 1) == [6, 5]  # truncated at the end of history
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


def test_controller_adapts_k() -> None:
    ctl = SpeculationController(SpeculationConfig(k_init=4, k_min=1, k_max=6), can_pause=False)
    ctl.record_round(4, 4, 0.01, None)
    assert ctl.k == 5
    ctl.record_round(5, 5, 0.01, None)
    ctl.record_round(6, 6, 0.01, None)
    assert ctl.k == 6
    ctl.record_round(6, 1, 0.01, None)
    assert ctl.k == 5
    ctl.record_round(5, 3, 0.01, None)  # more than half accepted: k stays
    assert ctl.k == 5
    for _ in range(10):
        ctl.record_round(ctl.k, 0, 0.01, None)
    assert ctl.k == 1
    assert ctl.acceptance is not None and ctl.acceptance < 0.1


def test_controller_pauses_when_speculation_is_slower_and_probes_again() -> None:
    ctl = SpeculationController(SpeculationConfig(probe_interval=3), can_pause=True)
    plain = 0.010
    ctl.record_round(4, 0, 0.030, plain)  # 30 ms per token vs 10: but one round is not evidence
    assert ctl.should_speculate()
    ctl.record_round(4, 0, 0.030, plain)
    assert [ctl.should_speculate() for _ in range(4)] == [False, False, False, True]
    ctl.record_round(4, 0, 0.030, plain)
    ctl.record_round(4, 0, 0.030, plain)
    assert [ctl.should_speculate() for _ in range(7)] == [False] * 6 + [True]  # pause doubled
    ctl.record_round(4, 4, 0.015, plain)
    ctl.record_round(4, 4, 0.015, plain)  # 3 ms per token: pays, keeps speculating
    assert ctl.should_speculate()


def test_controller_in_fixed_mode_never_pauses() -> None:
    ctl = SpeculationController(SpeculationConfig(), can_pause=False)
    for _ in range(5):
        ctl.record_round(4, 0, 1.0, 0.001)
    assert ctl.should_speculate()


def test_controller_in_auto_mode_runs_a_plain_step_now_and_then() -> None:
    ctl = SpeculationController(SpeculationConfig(probe_interval=2), can_pause=True)
    assert [ctl.should_speculate() for _ in range(10)] == [True] * 4 + [False] + [True] * 4 + [False]
