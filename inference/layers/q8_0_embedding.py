"""Token embeddings read from the Q8_0 blocks of a tied output head, so the two share one copy.

A GGUF whose tied `token_embd` is stored in Q8_0 (Gemma 3: 262,144 rows) would otherwise be held three
times over on the CPU: the float32 embedding (671 MB for Gemma 3 270M), the packed head, and the file.
When Q8_0 holds the weights exactly (`Q8_0Linear` round-trips the file's blocks), the head multiplies
by those blocks and the embedding dequantizes its rows from them: the same float32 values as before.
"""

from __future__ import annotations

import torch
from torch import nn

from inference.layers.block_linear import Q8_0Linear, dequantize_q8_0


class Q8_0Embedding(nn.Module):
    """Embedding rows dequantized from a `Q8_0Linear`'s blocks (out = vocabulary, in = hidden)."""

    def __init__(self, head: Q8_0Linear) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = head.out_features, head.in_features
        self.head = [head]  # a list: not a submodule, the head is the model's own `lm_head`

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        """input_ids (T,) int64 -> (T, embedding_dim) float32."""
        head = self.head[0]
        return dequantize_q8_0(head.codes[input_ids], head.scales[input_ids])


def exact_q8_0_head(weight: torch.Tensor) -> Q8_0Linear | None:
    """The output head of `weight` (vocabulary, hidden) in Q8_0 blocks when they hold it exactly (a
    GGUF's Q8_0 tensor), else None."""
    linear = nn.Linear(weight.shape[1], weight.shape[0], bias=False)
    linear.weight = nn.Parameter(weight.detach().float(), requires_grad=False)
    head = Q8_0Linear(linear)
    return head if torch.equal(head.dequantized(), linear.weight) else None
