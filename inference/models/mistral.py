"""Mistral: no biases anywhere; sliding-window attention when `sliding_window` is set."""

from __future__ import annotations

from inference.models.base import CausalLM
from inference.model_config import ModelConfig


class MistralForCausalLM(CausalLM):
    """Mistral: unbiased projections; the window comes from `ModelConfig.layer_sliding_windows`."""

    model_type = "mistral"

    @classmethod
    def attention_biases(cls, config: ModelConfig) -> tuple[bool, bool]:
        """Mistral has no attention biases."""
        return False, False
