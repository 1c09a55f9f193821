"""Checking k proposed tokens against the target's distributions from one forward pass.

Greedy: keep the longest run of proposals equal to the target's argmax, then the target's own token,
so the output is token for token what plain greedy decoding gives.

Sampling: the rejection rule of Leviathan et al. (2023). Proposal d_i drawn from q_i is accepted with
probability min(1, p_i(d_i) / q_i(d_i)); the first rejected position draws from the residual
norm(max(0, p_i - q_i)); if all k are accepted, a bonus token is drawn from p_{k+1}. Each emitted token
then has exactly the target's distribution. A proposer without probabilities (prompt lookup) is a
point mass, q_i = one_hot(d_i), for which the same rule reads: accept with probability p_i(d_i), else
draw from p_i with d_i removed.
"""

from __future__ import annotations

import torch

from inference.sampling import sample_from


def verify_greedy(target_logits: torch.Tensor, proposed: list[int]) -> list[int]:
    """Tokens to emit given target logits (k+1, V) for positions after each of the k proposals' inputs."""
    target_choice = target_logits.argmax(dim=-1).tolist()  # (k+1,)
    emitted: list[int] = []
    for i, token in enumerate(proposed):
        if target_choice[i] != token:
            break
        emitted.append(token)
    emitted.append(int(target_choice[len(emitted)]))
    return emitted


def verify_sampled(
    target_probs: torch.Tensor,
    proposed: list[int],
    draft_probs: torch.Tensor | None,
    generator: torch.Generator,
) -> list[int]:
    """Tokens to emit under the rejection rule.

    target_probs: (k+1, V) processed target distributions; draft_probs: (k, V) the distributions the
    proposals were drawn from, or None for a deterministic proposer (point masses).
    """
    emitted: list[int] = []
    for i, token in enumerate(proposed):
        p = target_probs[i]
        if draft_probs is None:
            q = torch.zeros_like(p)
            q[token] = 1.0
        else:
            q = draft_probs[i]
        accept_prob = min(1.0, float(p[token]) / max(float(q[token]), 1e-30))
        if float(torch.rand((), generator=generator, device=p.device)) < accept_prob:
            emitted.append(token)
            continue
        residual = (p - q).clamp_min(0.0)
        total = float(residual.sum())
        # A zero residual only happens through rounding when p == q; then p itself is the right law.
        emitted.append(sample_from(residual / total if total > 1e-12 else p, generator))
        return emitted
    emitted.append(sample_from(target_probs[len(proposed)], generator))
    return emitted
