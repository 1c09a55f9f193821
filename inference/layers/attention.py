"""Grouped-query attention over the paged KV pool (`inference.layers.paged_kv`).

Each sequence's new queries attend over that sequence's own blocks, with the same kernel calls as in a
call of that sequence alone, so batching sequences does not change any sequence's output.
"""

from __future__ import annotations

import sys

import torch
import torch.nn.functional as F
from torch import nn

from inference.layers.linear import concat_linears
from inference.layers.norm import RMSNorm
from inference.layers.paged_kv import AttentionMetadata, SequenceSpan, gather_kv, write_kv
from inference.layers.rotary import apply_rotary
from inference.model_config import ModelConfig


def causal_mask(
    num_new: int, context_len: int, sliding_window: int | None, device: torch.device, key_start: int = 0
) -> torch.Tensor | None:
    """Boolean (T, S) mask, True where a new token may attend to the keys at positions
    key_start..context_len-1 (S of them); None when every one of those keys is visible."""
    if num_new == 1 and (sliding_window is None or context_len - key_start <= sliding_window):
        return None
    q_pos = torch.arange(context_len - num_new, context_len, device=device)[:, None]  # (T, 1)
    k_pos = torch.arange(key_start, context_len, device=device)[None, :]  # (1, S)
    allowed = k_pos <= q_pos
    if sliding_window is not None:
        allowed &= q_pos - k_pos < sliding_window
    return allowed


# Up to this many new tokens (decode, speculative verification) the query heads of a KV head are
# stacked instead of copying K/V per query head; longer prefills are compute-bound and gain more
# from SDPA's causal fast path.
GROUPED_QUERY_MAX_TOKENS = 32
# Up to this many new rows of a sequence, the CPU kernel (when on) beats SDPA's per-call overhead.
KERNEL_MAX_TOKENS = 4
# Every row by the kernel, whatever the rows of the call: a row's attention then does not depend on
# how many rows it came with (set for the forms whose rows must be bit-identical, `ROW_EXACT_FORMS`).
ALL_ROWS = sys.maxsize


def paged_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    meta: AttentionMetadata,
    scale: float,
    sliding_window: int | None = None,
    kernel: bool = False,
    kernel_rows: int = KERNEL_MAX_TOKENS,
) -> torch.Tensor:
    """Attention of new queries q (T, H, D) over their sequences' cached keys and values; returns (T, H, D).

    Each sequence's rows attend only over its own blocks, with the same kernel calls as in a call of
    that sequence alone, so batching sequences does not change any sequence's attention output.
    kernel: a sequence of at most `kernel_rows` new rows (float32, CPU) is attended by the kernels
    (kernels/attention.h), reading its blocks in place (a sliding window's only), instead of SDPA.
    """
    if len(meta.spans) == 1:
        return span_attention(q, k_cache, v_cache, meta.spans[0], scale, sliding_window, kernel, kernel_rows)
    outputs, row = [], 0
    for span in meta.spans:
        outputs.append(
            span_attention(
                q[row : row + span.rows], k_cache, v_cache, span, scale, sliding_window, kernel, kernel_rows
            )
        )
        row += span.rows
    return torch.cat(outputs)  # (T, H, D)


def span_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    span: SequenceSpan,
    scale: float,
    sliding_window: int | None = None,
    kernel: bool = False,
    kernel_rows: int = KERNEL_MAX_TOKENS,
) -> torch.Tensor:
    """Attention of one sequence's new queries q (T, H, D) over its cached keys and values: (T, H, D)."""
    num_new, num_heads, head_dim = q.shape
    if kernel and num_new <= kernel_rows and k_cache.dtype == q.dtype:
        # A local layer's window too: SDPA gave a row other bits in a call of other rows (Gemma 3's
        # prompt lookup parted from plain decoding), the kernel does not.
        return torch.ops.codedraft_cpu.paged_attention(
            q, k_cache, v_cache, span.block_table, span.context_len, scale, sliding_window or 0
        )
    table, context_len, consecutive_from = span.block_table, span.context_len, span.consecutive_from
    key_start = 0
    if sliding_window is not None:
        # Blocks wholly before the first new token's window are not read: a local layer's attention
        # costs its window, whatever the context.
        skipped = max(0, span.context_len - num_new - sliding_window + 1) // k_cache.shape[2]
        if skipped:
            key_start = skipped * k_cache.shape[2]
            table, context_len = table[skipped:], context_len - key_start
            consecutive_from = None if consecutive_from is None else consecutive_from + skipped
    k = gather_kv(k_cache, table, context_len, consecutive_from).to(q.dtype)  # (KvH, S, D)
    v = gather_kv(v_cache, table, context_len, consecutive_from).to(q.dtype)
    kv_heads = k.shape[0]
    group = num_heads // kv_heads
    if num_new <= GROUPED_QUERY_MAX_TOKENS:
        # Query head h = kv * G + g (the checkpoints' GQA layout): the G heads sharing a KV head
        # become one batch entry with G*T query rows.
        q_grouped = q.view(num_new, kv_heads, group, head_dim).permute(1, 2, 0, 3)  # (KvH, G, T, D)
        q_grouped = q_grouped.reshape(kv_heads, group * num_new, head_dim)  # (KvH, G*T, D)
        mask = causal_mask(num_new, span.context_len, sliding_window, q.device, key_start)
        if mask is not None and group > 1:
            mask = mask.repeat(group, 1)  # (G*T, S): row g*T + t is query t of group member g
        out = F.scaled_dot_product_attention(
            q_grouped.unsqueeze(0),  # (1, KvH, G*T, D): 4-D inputs get SDPA's fused CPU kernel
            k.unsqueeze(0),  # (1, KvH, S, D)
            v.unsqueeze(0),
            attn_mask=mask,
            scale=scale,
        ).squeeze(0)  # (KvH, G*T, D)
        out = out.view(kv_heads, group, num_new, head_dim).permute(2, 0, 1, 3)  # (T, KvH, G, D)
        return out.reshape(num_new, num_heads, head_dim)
    if group > 1:
        k = k.repeat_interleave(group, dim=0)  # (H, S, D)
        v = v.repeat_interleave(group, dim=0)
    whole_sequence = num_new == span.context_len and sliding_window is None
    mask = (
        None
        if whole_sequence
        else causal_mask(num_new, span.context_len, sliding_window, q.device, key_start)
    )
    out = F.scaled_dot_product_attention(
        q.transpose(0, 1).unsqueeze(0),  # (1, H, T, D)
        k.unsqueeze(0),  # (1, H, S, D)
        v.unsqueeze(0),
        attn_mask=mask,
        is_causal=whole_sequence,
        scale=scale,
    )
    return out.squeeze(0).transpose(0, 1)  # (T, H, D)


class Attention(nn.Module):
    """Grouped-query self-attention with RoPE, optional q/k/v (and o) biases and per-head q/k RMSNorm.

    Parameter names follow the Hugging Face checkpoints (`q_proj`, `k_proj`, `v_proj`, `o_proj`,
    `q_norm`, `k_norm`) so a state dict loads as is.
    """

    def __init__(self, config: ModelConfig, layer_idx: int, qkv_bias: bool, o_bias: bool) -> None:
        super().__init__()
        self.num_heads = config.num_heads
        self.num_kv_heads = config.num_kv_heads
        self.head_dim = config.head_dim
        self.scale = config.attention_scale or config.head_dim**-0.5
        self.sliding_window = (
            config.layer_sliding_windows[layer_idx] if config.layer_sliding_windows else None
        )
        hidden, q_size, kv_size = (
            config.hidden_size,
            self.num_heads * self.head_dim,
            self.num_kv_heads * self.head_dim,
        )
        self.q_proj = nn.Linear(hidden, q_size, bias=qkv_bias)
        self.k_proj = nn.Linear(hidden, kv_size, bias=qkv_bias)
        self.v_proj = nn.Linear(hidden, kv_size, bias=qkv_bias)
        self.o_proj = nn.Linear(q_size, hidden, bias=o_bias)
        self.split_sizes = (q_size, kv_size, kv_size)
        # Set with the q4_1 weights forms (CPU, float32): few-row attention by kernels/attention.h,
        # up to kernel_rows new rows of a sequence.
        self.kernel = False
        self.kernel_rows = KERNEL_MAX_TOKENS
        # Set by fuse_projections: q|k|v from one matrix product (q/k/v_proj are then dropped).
        self.qkv_proj: nn.Module | None = None
        self.q_norm: RMSNorm | None = None
        self.k_norm: RMSNorm | None = None
        if config.qk_norm:
            self.q_norm = RMSNorm(self.head_dim, config.rms_norm_eps)
            self.k_norm = RMSNorm(self.head_dim, config.rms_norm_eps)

    def fuse_projections(self) -> None:
        """Compute q, k and v with one matrix product of their stacked weights from now on."""
        self.qkv_proj = concat_linears(self.q_proj, self.k_proj, self.v_proj)
        del self.q_proj, self.k_proj, self.v_proj

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
        """hidden (T, hidden_size) -> (T, hidden_size); writes this call's K/V into the pool first.
        With `rows` (int64 indices) only those rows' outputs are projected and returned (R, hidden_size):
        every row's K/V is still written."""
        num_new = hidden.shape[0]
        heads, kv_heads = self.num_heads, self.num_kv_heads
        if self.qkv_proj is not None and self.q_norm is None:
            qkv = self.qkv_proj(hidden).view(num_new, heads + 2 * kv_heads, self.head_dim)  # (T, H+2KvH, D)
            if (
                self.kernel
                and num_new <= self.kernel_rows
                and self.sliding_window is None
                and len(meta.spans) == 1
            ):
                # Rotary, the K/V write and attention in one call of the kernels.
                span = meta.spans[0]
                out = torch.ops.codedraft_cpu.rotate_store_attend(
                    qkv,
                    cos,
                    sin,
                    k_cache,
                    v_cache,
                    meta.slot_mapping,
                    span.block_table,
                    span.context_len,
                    heads,
                    self.scale,
                )  # (T, H*D)
                return self.o_proj(out if rows is None else out[rows])
            qk = apply_rotary(qkv[:, : heads + kv_heads], cos, sin)  # q and k heads rotated in one go
            q, k, v = qk[:, :heads], qk[:, heads:], qkv[:, heads + kv_heads :]  # (T, H, D), (T, KvH, D) x2
        else:
            if self.qkv_proj is not None:
                q, k, v = self.qkv_proj(hidden).split(self.split_sizes, dim=-1)  # (T, H*D), (T, KvH*D) x2
            else:
                q, k, v = self.q_proj(hidden), self.k_proj(hidden), self.v_proj(hidden)
            q = q.view(num_new, heads, self.head_dim)  # (T, H, D)
            k = k.view(num_new, kv_heads, self.head_dim)  # (T, KvH, D)
            v = v.view(num_new, kv_heads, self.head_dim)
            if self.q_norm is not None and self.k_norm is not None:
                q, k = self.q_norm(q), self.k_norm(k)
            q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        write_kv(k_cache, v_cache, k, v, meta.slot_mapping)
        out = paged_attention(
            q, k_cache, v_cache, meta, self.scale, self.sliding_window, self.kernel, self.kernel_rows
        )  # (T, H, D)
        out = out.reshape(num_new, self.num_heads * self.head_dim)
        return self.o_proj(out if rows is None else out[rows])
