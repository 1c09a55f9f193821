"""Turning logits into tokens: temperature, top-p, seeded sampling and greedy choice.

Speculative verification works on the same processed distributions (`token_probabilities`), so a
sampled token follows exactly the distribution plain decoding would sample from.
"""

from __future__ import annotations

import torch

from inference.config import SamplingParams


def make_generator(seed: int | None, device: torch.device) -> torch.Generator:
    """A per-request generator: seeded when the request gives a seed, else from fresh entropy."""
    generator = torch.Generator(device=device)
    if seed is None:
        generator.seed()
    else:
        generator.manual_seed(seed)
    return generator


def token_probabilities(logits: torch.Tensor, params: SamplingParams) -> torch.Tensor:
    """Float32 probabilities (N, V) after temperature and top-p; a one-hot argmax row when greedy."""
    logits = logits.float()
    if params.greedy:
        return torch.nn.functional.one_hot(logits.argmax(dim=-1), logits.shape[-1]).float()
    probs = torch.softmax(logits / params.temperature, dim=-1)
    if params.top_p < 1.0:
        sorted_probs, order = probs.sort(dim=-1, descending=True)
        # Keep the smallest set whose mass reaches top_p: a token stays if the mass before it is < top_p.
        mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs
        sorted_probs = sorted_probs.masked_fill(mass_before >= params.top_p, 0.0)
        probs = torch.zeros_like(probs).scatter_(-1, order, sorted_probs)
        probs = probs / probs.sum(dim=-1, keepdim=True)
    return probs


def sample_from(probs: torch.Tensor, generator: torch.Generator) -> int:
    """One token drawn from a probability row (V,)."""
    return int(torch.multinomial(probs, 1, generator=generator).item())


def choose_token(logits: torch.Tensor, params: SamplingParams, generator: torch.Generator) -> int:
    """The next token from one logits row (V,): argmax when greedy, else a draw after temperature/top-p."""
    if params.greedy:
        return int(logits.argmax().item())
    return sample_from(token_probabilities(logits.unsqueeze(0), params)[0], generator)
