"""Gemma 3 (text, `gemma3_text`; GGUF architecture `gemma3`): the Llama layout with Gemma's differences.

* interleaved sliding-window (local) and global attention layers (`ModelConfig.layer_sliding_windows`),
  with a RoPE base of their own for the local ones (`local_rope_theta`, 10k; global 1M);
* per-head q/k RMS norms, and norms after attention and after the feed-forward block ("sandwich");
* GeGLU (tanh GELU), attention scaled by `query_pre_attn_scalar`, embeddings scaled by √hidden_size,
  tied embeddings.

Gemma's RMSNorm multiplies by (1 + w) where a Hugging Face checkpoint stores w; llama.cpp's converter
stores 1 + w in the GGUF. This module holds 1 + w (the plain `RMSNorm`), added once at load.
"""

from __future__ import annotations

import torch

from inference.model_config import ModelConfig
from inference.models.base import CausalLM


class Gemma3ForCausalLM(CausalLM):
    """Gemma 3's text decoder; the Hugging Face names (`pre_feedforward_layernorm`, ...) load as they are."""

    model_type = "gemma3_text"

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config)
        self.embedding_scale = config.hidden_size**0.5

    @classmethod
    def sandwich_norms(cls) -> bool:
        """Gemma norms the outputs of attention and of the MLP before they join the residual."""
        return True

    @classmethod
    def attention_biases(cls, config: ModelConfig) -> tuple[bool, bool]:
        """Gemma 3's projections have no biases."""
        return False, False

    @classmethod
    def checkpoint_state(cls, state: dict[str, torch.Tensor]) -> None:
        """A Hugging Face checkpoint stores each norm's w of (1 + w): hold 1 + w, summed in float32 as
        the reference computes it."""
        for name, tensor in state.items():
            if name.endswith("norm.weight"):
                state[name] = (1.0 + tensor.float()).to(tensor.dtype)
