"""Gemma 3's `config.json` spellings (transformers 4 and 5) read into one `ModelConfig`."""

from __future__ import annotations

from typing import Any

import pytest

from inference.model_config import ModelConfig

# google/gemma-3-270m's config.json as transformers 4 wrote it (no layer_types on older exports).
GEMMA3_270M: dict[str, Any] = {
    "model_type": "gemma3_text",
    "vocab_size": 262144,
    "hidden_size": 640,
    "intermediate_size": 2048,
    "num_hidden_layers": 18,
    "num_attention_heads": 4,
    "num_key_value_heads": 1,
    "head_dim": 256,
    "hidden_activation": "gelu_pytorch_tanh",
    "query_pre_attn_scalar": 256,
    "rope_theta": 1000000.0,
    "rope_local_base_freq": 10000.0,
    "rope_scaling": None,
    "sliding_window": 512,
    "sliding_window_pattern": 6,
    "final_logit_softcapping": None,
    "attn_logit_softcapping": None,
    "max_position_embeddings": 32768,
    "rms_norm_eps": 1e-06,
}


def test_transformers_4_config() -> None:
    config = ModelConfig.from_dict(GEMMA3_270M)
    local = (512,) * 5
    assert config.layer_sliding_windows == (*local, None, *local, None, *local, None)
    assert (config.rope_theta, config.local_rope_theta, config.rope_scaling) == (1e6, 1e4, None)
    assert (config.attention_scale, config.hidden_act, config.qk_norm) == (1 / 16, "gelu_pytorch_tanh", True)


def test_transformers_5_config_with_layer_types_and_rope_parameters() -> None:
    raw = {k: v for k, v in GEMMA3_270M.items() if k not in ("rope_theta", "rope_local_base_freq")}
    raw["layer_types"] = ["sliding_attention", "full_attention"] * 9
    raw["rope_parameters"] = {
        "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
        "sliding_attention": {"rope_type": "default", "rope_theta": 2e4},
    }
    config = ModelConfig.from_dict(raw)
    assert config.layer_sliding_windows == (512, None) * 9
    assert (config.rope_theta, config.local_rope_theta) == (1e6, 2e4)
    assert config.rope_scaling == {"rope_type": "linear", "factor": 8.0}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"final_logit_softcapping": 30.0}, "final_logit_softcapping=30.0 is not supported"),
        ({"attn_logit_softcapping": 50.0}, "attn_logit_softcapping=50.0 is not supported"),
        ({"layer_types": ["sliding_attention"] * 17}, "is not 18 sliding/full attention layers"),
        ({"layer_types": ["chunked_attention"] * 18}, "is not 18 sliding/full attention layers"),
        ({"hidden_activation": "relu"}, "unsupported hidden_act 'relu'"),
        ({"use_bidirectional_attention": True}, "use_bidirectional_attention"),
    ],
)
def test_what_is_not_implemented_is_refused(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ModelConfig.from_dict({**GEMMA3_270M, **change})
