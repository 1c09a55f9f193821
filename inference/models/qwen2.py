"""Qwen2 (Qwen2.5-Coder): q/k/v always carry biases, the output projection never does."""

from __future__ import annotations

from inference.models.base import CausalLM
from inference.model_config import ModelConfig


class Qwen2ForCausalLM(CausalLM):
    """Qwen2: biased q/k/v, unbiased o; sliding window only on layers the config marks."""

    model_type = "qwen2"

    @classmethod
    def attention_biases(cls, config: ModelConfig) -> tuple[bool, bool]:
        """Qwen2 always has q/k/v biases and no o_proj bias."""
        return True, False
