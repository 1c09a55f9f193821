"""Rotary position embeddings with the `rope_scaling` variants Llama-family checkpoints use.

Supported `rope_type`s: default, linear, dynamic (NTK), llama3, yarn. Frequencies follow the
reference formulas of each variant; `dynamic` rescales from the furthest position in the call, as
the reference does for a whole-sequence forward pass.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from inference.model_config import ModelConfig

SUPPORTED_ROPE_TYPES = frozenset({"default", "linear", "dynamic", "llama3", "yarn"})


def _base_inv_freq(base: float, dim: int) -> torch.Tensor:
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))


def _llama3_inv_freq(inv_freq: torch.Tensor, scaling: dict[str, Any]) -> torch.Tensor:
    factor = float(scaling["factor"])
    low, high = float(scaling["low_freq_factor"]), float(scaling["high_freq_factor"])
    old_len = float(scaling["original_max_position_embeddings"])
    wavelen = 2 * math.pi / inv_freq
    # Long wavelengths are interpolated by `factor`, short ones kept, the middle band blended smoothly.
    scaled = torch.where(wavelen > old_len / low, inv_freq / factor, inv_freq)
    smooth = (old_len / wavelen - low) / (high - low)
    blended = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < old_len / high) * ~(wavelen > old_len / low)
    return torch.where(medium, blended, scaled)


def _yarn(base: float, dim: int, scaling: dict[str, Any], max_pos: int) -> tuple[torch.Tensor, float]:
    factor = float(scaling["factor"])
    original = int(scaling.get("original_max_position_embeddings") or max_pos)
    attention_factor = scaling.get("attention_factor")
    mscale, mscale_all_dim = scaling.get("mscale"), scaling.get("mscale_all_dim")

    def get_mscale(scale: float, m: float = 1.0) -> float:
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
        else:
            attention_factor = get_mscale(factor)
    beta_fast = scaling.get("beta_fast") or 32
    beta_slow = scaling.get("beta_slow") or 1

    def correction_dim(rotations: float) -> float:
        return (dim * math.log(original / (rotations * 2 * math.pi))) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if scaling.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    extrapolation_weight = 1 - ramp
    pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
    inv_freq = (1.0 / (factor * pos_freqs)) * (1 - extrapolation_weight) + (
        1.0 / pos_freqs
    ) * extrapolation_weight
    return inv_freq, float(attention_factor)


class RotaryEmbedding(nn.Module):
    """Computes (cos, sin) of shape (T, head_dim) for integer positions.

    local: the rotation of a model's sliding-window layers where it has one of their own (Gemma 3:
    base `local_rope_theta`, no scaling); otherwise `rope_theta` with `rope_scaling`.
    """

    def __init__(self, config: ModelConfig, local: bool = False) -> None:
        super().__init__()
        if local and config.local_rope_theta is None:
            raise ValueError(f"{config.model_type} has no rotary embedding of its own for local layers")
        self.dim = config.head_dim
        self.base = config.local_rope_theta if local and config.local_rope_theta else config.rope_theta
        self.max_pos = config.max_position_embeddings
        self.scaling = {} if local else config.rope_scaling or {}
        self.rope_type = str(self.scaling.get("rope_type", "default"))
        if self.rope_type not in SUPPORTED_ROPE_TYPES:
            raise ValueError(f"unsupported rope_scaling type {self.rope_type!r}")
        self.attention_scaling = 1.0
        inv_freq = _base_inv_freq(self.base, self.dim)
        if self.rope_type == "linear":
            inv_freq = inv_freq / float(self.scaling["factor"])
        elif self.rope_type == "llama3":
            inv_freq = _llama3_inv_freq(inv_freq, self.scaling)
        elif self.rope_type == "yarn":
            inv_freq, self.attention_scaling = _yarn(self.base, self.dim, self.scaling, self.max_pos)
        self.inv_freq: torch.Tensor
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def _dynamic_inv_freq(self, seq_len: int) -> torch.Tensor:
        factor = float(self.scaling["factor"])
        seq_len = max(seq_len, self.max_pos)
        base = self.base * ((factor * seq_len / self.max_pos) - (factor - 1)) ** (self.dim / (self.dim - 2))
        return _base_inv_freq(base, self.dim).to(self.inv_freq.device)

    def forward(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """positions (T,) int64 -> cos, sin, each (T, head_dim) float32."""
        inv_freq = self.inv_freq
        if self.rope_type == "dynamic":
            seq_len = int(positions.max().item()) + 1
            if seq_len > self.max_pos:
                inv_freq = self._dynamic_inv_freq(seq_len)
        freqs = positions[:, None].float() * inv_freq[None, :].float()  # (T, D/2)
        emb = torch.cat((freqs, freqs), dim=-1)  # (T, D)
        return emb.cos() * self.attention_scaling, emb.sin() * self.attention_scaling


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate x (T, H, D) by per-position (cos, sin) (T, D), in the rotate-half convention."""
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    cos, sin = cos[:, None, :].to(x.dtype), sin[:, None, :].to(x.dtype)  # (T, 1, D)
    return x * cos + rotated * sin
