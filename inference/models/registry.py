"""Architectures by `config.json`'s `model_type`."""

from __future__ import annotations

from inference.models.base import CausalLM
from inference.models.gemma3 import Gemma3ForCausalLM
from inference.models.llama import LlamaForCausalLM
from inference.models.mistral import MistralForCausalLM
from inference.models.qwen2 import Qwen2ForCausalLM
from inference.models.qwen3 import Qwen3ForCausalLM

ARCHITECTURES: dict[str, type[CausalLM]] = {
    cls.model_type: cls
    for cls in (LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, MistralForCausalLM, Gemma3ForCausalLM)
}


def architecture_for(model_type: str) -> type[CausalLM] | None:
    """The class implementing `model_type`, or None when it is not supported."""
    return ARCHITECTURES.get(model_type)
