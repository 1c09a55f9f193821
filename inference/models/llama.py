"""Llama (and CodeLlama, the codedraft default model): biases follow `attention_bias` / `mlp_bias`."""

from __future__ import annotations

from inference.models.base import CausalLM
from inference.model_config import ModelConfig


class LlamaForCausalLM(CausalLM):
    """Llama: q/k/v/o biases and MLP biases only when the config asks for them."""

    model_type = "llama"

    @classmethod
    def mlp_bias(cls, config: ModelConfig) -> bool:
        """Llama's MLP has biases when `mlp_bias` is set."""
        return config.mlp_bias
