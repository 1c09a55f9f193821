"""RoPE frequencies of every supported scaling variant against transformers' reference formulas."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from inference.layers.rotary import RotaryEmbedding, apply_rotary
from inference.model_config import ModelConfig

transformers = pytest.importorskip("transformers")
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS  # noqa: E402

SCALINGS: list[dict[str, Any]] = [
    {"rope_type": "linear", "factor": 2.5},
    {"rope_type": "dynamic", "factor": 4.0},
    {
        "rope_type": "llama3",
        "factor": 32.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    },
    {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
    {
        "rope_type": "yarn",
        "factor": 8.0,
        "original_max_position_embeddings": 4096,
        "beta_fast": 16,
        "beta_slow": 2,
    },
    {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096, "truncate": False},
    {
        "rope_type": "yarn",
        "factor": 40.0,
        "original_max_position_embeddings": 4096,
        "mscale": 1.0,
        "mscale_all_dim": 0.5,
    },
    {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096, "attention_factor": 1.3},
]


def raw_config(scaling: dict[str, Any]) -> dict[str, Any]:
    return {
        "model_type": "llama",
        "vocab_size": 32,
        "hidden_size": 256,
        "intermediate_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "head_dim": 128,
        "max_position_embeddings": 131072,
        "rope_parameters": {"rope_theta": 500000.0, **scaling},
    }


def configs(scaling: dict[str, Any]) -> tuple[ModelConfig, Any]:
    raw = raw_config(scaling)
    return ModelConfig.from_dict(raw), transformers.LlamaConfig(**raw)


@pytest.mark.parametrize("scaling", SCALINGS, ids=lambda s: "-".join(f"{k}={v}" for k, v in s.items()))
def test_frequencies_match_reference(scaling: dict[str, Any]) -> None:
    ours_config, hf_config = configs(scaling)
    rotary = RotaryEmbedding(ours_config)
    inv_freq, attention_factor = ROPE_INIT_FUNCTIONS[scaling["rope_type"]](hf_config, torch.device("cpu"))
    torch.testing.assert_close(rotary.inv_freq, inv_freq, rtol=1e-6, atol=0)
    assert rotary.attention_scaling == pytest.approx(attention_factor, rel=1e-9)


def test_dynamic_rescales_past_the_trained_length() -> None:
    ours_config, hf_config = configs({"rope_type": "dynamic", "factor": 4.0})
    rotary = RotaryEmbedding(ours_config)
    seq_len = 3 * ours_config.max_position_embeddings
    expected, _ = ROPE_INIT_FUNCTIONS["dynamic"](hf_config, torch.device("cpu"), seq_len=seq_len)
    cos, _sin = rotary(torch.tensor([seq_len - 1]))
    half = ours_config.head_dim // 2
    torch.testing.assert_close(cos[0, :half], torch.cos((seq_len - 1) * expected), rtol=1e-5, atol=1e-5)
    # Within the trained length nothing changes.
    inside, _ = rotary(torch.tensor([100]))
    torch.testing.assert_close(inside[0, :half], torch.cos(100 * rotary.inv_freq))


def test_rotation_preserves_norm_and_relative_angle() -> None:
    config, _ = configs({"rope_type": "linear", "factor": 1.0})
    rotary = RotaryEmbedding(config)
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 1, 128, generator=gen), torch.randn(1, 1, 128, generator=gen)
    cos_a, sin_a = rotary(torch.tensor([7]))
    cos_b, sin_b = rotary(torch.tensor([3]))
    cos_c, sin_c = rotary(torch.tensor([104]))
    cos_d, sin_d = rotary(torch.tensor([100]))
    torch.testing.assert_close(apply_rotary(q, cos_a, sin_a).norm(), q.norm())
    # q.k depends only on the distance between the positions (7-3 == 104-100).
    near = (apply_rotary(q, cos_a, sin_a) * apply_rotary(k, cos_b, sin_b)).sum()
    far = (apply_rotary(q, cos_c, sin_c) * apply_rotary(k, cos_d, sin_d)).sum()
    torch.testing.assert_close(near, far, rtol=1e-4, atol=1e-4)


def test_unknown_rope_type_is_refused() -> None:
    config = ModelConfig.from_dict(raw_config({"rope_type": "longrope", "factor": 2.0}))
    with pytest.raises(ValueError, match="unsupported rope_scaling type 'longrope'"):
        RotaryEmbedding(config)
