"""Qwen3: Llama-style attention plus an RMSNorm over each head of q and k before RoPE."""

from __future__ import annotations

from inference.models.base import CausalLM


class Qwen3ForCausalLM(CausalLM):
    """Qwen3: per-head q/k RMSNorm (enabled by `ModelConfig.qk_norm`), biases per `attention_bias`."""

    model_type = "qwen3"
