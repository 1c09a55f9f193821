"""The decoder layer, and its few-row step as one kernel call (the q4_1 forms' fast path for decoding).

With the q4_1 or q4_1_q8 weights form, a decode step of a Llama-layout layer (fused q|k|v and gate|up, all four
products in Q4_1 blocks without biases, no q/k norms, no sliding window, SwiGLU, no sandwich norms: not Gemma) runs its norms, products,
RoPE, K/V write and attention as `torch.ops.codedraft_cpu.decoder_layer`: the same kernels and ATen
operations as the layer's modules, without the Python between them (about 15 module and operator
calls a layer). Anything else takes the modules.
"""

from __future__ import annotations

import torch
from torch import nn

from inference.layers.attention import Attention
from inference.layers.block_linear import FEW_ROWS, Q4_1Linear
from inference.layers.int8_activation_linear import Q4_1Q8Linear
from inference.layers.mlp import SwiGLU
from inference.layers.norm import RMSNorm
from inference.layers.paged_kv import AttentionMetadata
from inference.model_config import ModelConfig


class DecoderLayer(nn.Module):
    """Pre-norm block: x + attn(norm(x)), then x + mlp(norm(x)).

    With `sandwich_norms` (Gemma) each sub-block's output is normed too before it joins the residual:
    x + post_attention_norm(attn(input_norm(x))), then x + post_feedforward_norm(mlp(pre_feedforward_norm(x))).
    `post_attention_layernorm` is then the norm after attention (the Llama family's is the one before the MLP).
    """

    def __init__(
        self,
        config: ModelConfig,
        layer_idx: int,
        qkv_bias: bool,
        o_bias: bool,
        mlp_bias: bool,
        sandwich_norms: bool = False,
    ) -> None:
        super().__init__()
        self.self_attn = Attention(config, layer_idx, qkv_bias=qkv_bias, o_bias=o_bias)
        self.mlp = SwiGLU(config.hidden_size, config.intermediate_size, bias=mlp_bias, activation=config.hidden_act)
        self.input_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.pre_feedforward_layernorm: RMSNorm | None = None
        self.post_feedforward_layernorm: RMSNorm | None = None
        if sandwich_norms:
            self.pre_feedforward_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
            self.post_feedforward_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        # Set with the q4_1 weights forms where the layer qualifies: its few-row step in one kernel call.
        self.fused: FusedDecoderStep | None = None

    def forward(
        self,
        hidden: torch.Tensor,
        cos: torch.Tensor,
        sin: torch.Tensor,
        k_cache: torch.Tensor,
        v_cache: torch.Tensor,
        meta: AttentionMetadata,
        rows: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """hidden (T, hidden_size) -> (T, hidden_size), or with `rows` (int64 indices) only those rows
        (R, hidden_size): every row's K/V is written, and past attention only `rows` are computed (a
        prompt's last layer, whose other rows nothing reads)."""
        if self.fused is not None and hidden.shape[0] <= self.self_attn.kernel_rows and len(meta.spans) == 1:
            out = self.fused(hidden, cos, sin, k_cache, v_cache, meta)
            return out if rows is None else out[rows]
        attended = self.self_attn(self.input_layernorm(hidden), cos, sin, k_cache, v_cache, meta, rows)
        if rows is not None:
            hidden = hidden[rows]
        if self.pre_feedforward_layernorm is not None and self.post_feedforward_layernorm is not None:
            hidden = hidden + self.post_attention_layernorm(attended)
            return hidden + self.post_feedforward_layernorm(self.mlp(self.pre_feedforward_layernorm(hidden)))
        hidden = hidden + attended
        return hidden + self.mlp(self.post_attention_layernorm(hidden))


class FusedDecoderStep:
    """Holds one layer's tensors for `decoder_layer`; built by `of` when the layer qualifies."""

    def __init__(self, layer: DecoderLayer, projections: list[Q4_1Linear] | list[Q4_1Q8Linear]) -> None:
        attention = layer.self_attn
        self.input_norm = layer.input_layernorm.weight.detach()
        self.post_norm = layer.post_attention_layernorm.weight.detach()
        self.eps = float(layer.input_layernorm.eps)
        self.heads, self.scale = attention.num_heads, float(attention.scale)
        self.weights = [t for p in projections for t in (p.codes, p.scales, p.minimums)]
        int8 = isinstance(projections[0], Q4_1Q8Linear)
        kernels = torch.ops.codedraft_cpu
        self.step = kernels.decoder_layer_q8.default if int8 else kernels.decoder_layer.default

    @classmethod
    def of(cls, layer: DecoderLayer) -> FusedDecoderStep | None:
        """The fused step of a packed `DecoderLayer`, or None when it does not qualify."""
        attention, mlp = layer.self_attn, layer.mlp
        candidates = [attention.qkv_proj, attention.o_proj, mlp.gate_up_proj, mlp.down_proj]
        projections: list[Q4_1Linear] | list[Q4_1Q8Linear] = [p for p in candidates if isinstance(p, Q4_1Linear)]
        if not projections:
            projections = [p for p in candidates if isinstance(p, Q4_1Q8Linear)]
        norms = (layer.input_layernorm, layer.post_attention_layernorm)
        qualifies = (
            len(projections) == len(candidates)
            and all(p.bias is None for p in projections)
            and attention.kernel
            and attention.q_norm is None
            and attention.sliding_window is None
            and layer.pre_feedforward_layernorm is None
            and not mlp.gelu
            and all(n.kernel and n.eps == norms[0].eps for n in norms)
        )
        return cls(layer, projections) if qualifies else None

    def __call__(
        self,
        hidden: torch.Tensor,
        cos: torch.Tensor,
        sin: torch.Tensor,
        k_cache: torch.Tensor,
        v_cache: torch.Tensor,
        meta: AttentionMetadata,
    ) -> torch.Tensor:
        """hidden (T, hidden_size) of one sequence -> (T, hidden_size); writes the rows' K/V first."""
        span = meta.spans[0]
        return self.step(
            hidden, self.input_norm, self.post_norm, self.eps, self.weights, cos, sin, k_cache, v_cache,
            meta.slot_mapping, span.block_table, span.context_len, self.heads, self.scale, FEW_ROWS,
        )  # fmt: skip
