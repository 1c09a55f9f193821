"""`ModelConfig`: one normalised view of a Hugging Face `config.json` for the Llama family and Gemma 3."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ModelConfig:
    """Architecture hyper-parameters, with every family's spelling mapped to one name.

    `rope_scaling` is the scaling dict (`rope_type`, `factor`, ...) or None for plain RoPE; both the
    old `rope_theta` + `rope_scaling` layout and transformers 5's `rope_parameters` are read.
    `layer_sliding_windows[i]` is the window of layer i (None: full causal attention).
    Gemma 3 (`gemma3_text`) adds: `hidden_act` gelu_pytorch_tanh (GeGLU), `attention_scale` from
    `query_pre_attn_scalar`, and `local_rope_theta`, the RoPE base of its sliding-window layers
    (its global layers use `rope_theta` and `rope_scaling`).
    """

    model_type: str
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    max_position_embeddings: int
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    rope_scaling: dict[str, Any] | None = None
    tie_word_embeddings: bool = False
    attention_bias: bool = False
    mlp_bias: bool = False
    qk_norm: bool = False
    hidden_act: str = "silu"
    attention_scale: float | None = None
    local_rope_theta: float | None = None
    layer_sliding_windows: tuple[int | None, ...] = ()
    bos_token_id: int | None = None
    eos_token_ids: tuple[int, ...] = ()
    torch_dtype: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ModelConfig:
        """Normalise a parsed `config.json`. Raises KeyError/TypeError/ValueError on a malformed file."""
        model_type = str(raw["model_type"])
        hidden = int(raw["hidden_size"])
        num_heads = int(raw["num_attention_heads"])
        num_layers = int(raw["num_hidden_layers"])
        head_dim = raw.get("head_dim") or hidden // num_heads
        rope_theta, rope_scaling = _rope_settings(raw)
        eos = raw.get("eos_token_id")
        eos_ids = (
            tuple(int(i) for i in eos) if isinstance(eos, list) else (() if eos is None else (int(eos),))
        )
        bos = raw.get("bos_token_id")
        num_kv_heads = int(raw.get("num_key_value_heads") or num_heads)
        if num_heads % num_kv_heads:
            raise ValueError(
                f"num_attention_heads={num_heads} is not a multiple of num_key_value_heads={num_kv_heads}"
            )
        activation = str(raw.get("hidden_activation") or raw.get("hidden_act") or "silu")
        if activation not in SUPPORTED_ACTIVATIONS:
            raise ValueError(
                f"unsupported hidden_act {activation!r} (supported: {', '.join(SUPPORTED_ACTIVATIONS)})"
            )
        gemma = model_type == GEMMA3
        if gemma:
            _check_gemma3(raw)
        return cls(
            model_type=model_type,
            vocab_size=int(raw["vocab_size"]),
            hidden_size=hidden,
            intermediate_size=int(raw["intermediate_size"]),
            num_layers=num_layers,
            num_heads=num_heads,
            num_kv_heads=num_kv_heads,
            head_dim=int(head_dim),
            max_position_embeddings=int(raw.get("max_position_embeddings", 2048)),
            rms_norm_eps=float(raw.get("rms_norm_eps", 1e-6)),
            rope_theta=rope_theta,
            rope_scaling=rope_scaling,
            tie_word_embeddings=bool(raw.get("tie_word_embeddings", False)),
            # qwen2 always has q/k/v biases and no `attention_bias` key.
            attention_bias=bool(raw.get("attention_bias", model_type == "qwen2")),
            mlp_bias=bool(raw.get("mlp_bias", False)),
            qk_norm=model_type in ("qwen3", GEMMA3),
            hidden_act=activation,
            attention_scale=float(raw.get("query_pre_attn_scalar", 256)) ** -0.5 if gemma else None,
            local_rope_theta=_local_rope_theta(raw) if gemma else None,
            layer_sliding_windows=_sliding_windows(raw, model_type, num_layers),
            bos_token_id=None if bos is None else int(bos),
            eos_token_ids=eos_ids,
            torch_dtype=raw.get("torch_dtype") or raw.get("dtype"),
            raw=raw,
        )

    @classmethod
    def from_file(cls, path: str | Path) -> ModelConfig:
        """Read and normalise a `config.json` file."""
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


GEMMA3 = "gemma3_text"
# The gated feed-forward activations: SwiGLU (the Llama family) and GeGLU with tanh GELU (Gemma).
SUPPORTED_ACTIVATIONS = ("silu", "gelu_pytorch_tanh")
# Gemma 3 without `layer_types`: every sixth layer global, the others sliding (transformers' and
# llama.cpp's default `sliding_window_pattern`).
GEMMA3_SLIDING_PATTERN = 6


def _check_gemma3(raw: dict[str, Any]) -> None:
    """Refuse the Gemma 3 options codedraft does not implement (no released text model uses them)."""
    for key in ("final_logit_softcapping", "attn_logit_softcapping"):
        if raw.get(key):
            raise ValueError(f"{key}={raw[key]} is not supported for gemma3_text")
    if raw.get("use_bidirectional_attention"):
        raise ValueError("use_bidirectional_attention (an embedding model) is not supported")


def _local_rope_theta(raw: dict[str, Any]) -> float:
    """The RoPE base of Gemma 3's sliding-window layers (`rope_local_base_freq`, or transformers 5's
    `rope_parameters.sliding_attention`)."""
    params = raw.get("rope_parameters")
    if isinstance(params, dict) and isinstance(params.get("sliding_attention"), dict):
        local = params["sliding_attention"]
        if local.get("rope_type", "default") != "default":
            raise ValueError(f"unsupported rope_type {local['rope_type']!r} on sliding-window layers")
        return float(local.get("rope_theta", 10000.0))
    return float(raw.get("rope_local_base_freq", 10000.0))


def _rope_settings(raw: dict[str, Any]) -> tuple[float, dict[str, Any] | None]:
    params = raw.get("rope_parameters")
    if isinstance(params, dict) and "full_attention" in params:
        params = params["full_attention"]
    if isinstance(params, dict):
        theta = float(params.get("rope_theta", raw.get("rope_theta", 10000.0)))
        scaling: dict[str, Any] | None = {k: v for k, v in params.items() if k != "rope_theta"}
    else:
        theta = float(raw.get("rope_theta", 10000.0))
        scaling = dict(raw["rope_scaling"]) if raw.get("rope_scaling") else None
    if scaling is not None:
        # Old checkpoints spell the kind `type`; transformers treats "default" as no scaling.
        kind = scaling.get("rope_type", scaling.get("type", "default"))
        scaling["rope_type"] = kind
        scaling.pop("type", None)
        if kind == "default":
            scaling = None
    return theta, scaling


def _sliding_windows(raw: dict[str, Any], model_type: str, num_layers: int) -> tuple[int | None, ...]:
    window = raw.get("sliding_window")
    layer_types = raw.get("layer_types")
    if not window:
        return (None,) * num_layers
    known = {"sliding_attention", "full_attention"}
    if isinstance(layer_types, list) and len(layer_types) == num_layers and set(layer_types) <= known:
        return tuple(int(window) if t == "sliding_attention" else None for t in layer_types)
    if model_type == GEMMA3:
        if layer_types is not None:
            raise ValueError(f"layer_types {layer_types!r} is not {num_layers} sliding/full attention layers")
        pattern = int(raw.get("sliding_window_pattern") or GEMMA3_SLIDING_PATTERN)
        return tuple(int(window) if (i + 1) % pattern else None for i in range(num_layers))
    if model_type in ("qwen2", "qwen3"):
        # Qwen only slides when asked, and then only from layer `max_window_layers` on.
        if not raw.get("use_sliding_window", False):
            return (None,) * num_layers
        start = int(raw.get("max_window_layers", num_layers))
        return tuple(int(window) if i >= start else None for i in range(num_layers))
    return (int(window),) * num_layers
