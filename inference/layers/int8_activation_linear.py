"""Block weights times 8-bit activations, as llama.cpp's CPU products: the `q4_1_q8` weights form.

The weights are the `q4_1` form's (`block_linear`: Q4_1, and Q8_0 where that holds a matrix or for
the output projection, the same codes, scales and minimums), repacked for integer dot products
(`kernels/int8_products.h`). Each call quantizes every row of x per block of 32, alone:
dx = max|x| / 127, q = round(x / dx), s = dx * sum(q) (as GGUF's Q8_1), and y = sum over blocks of
d_w dx (q_w . q_x) (+ m_w s for Q4_1), the code products exact in integers (AVX-512 VNNI, else
AVX2, else plain loops: the same integers and the same outputs), the rest float32.

Numerics: unlike `q4_1` (float32 activations, outputs equal to the dequantized weights' float32
product up to summation order), the activations are rounded to 8 bits per 32-block, so outputs
differ from float32's by about 1/254 of each block's largest activation per term: greedy output
may part from the `q4_1` form's after some tokens, as llama.cpp's own Q4_1 output does from a float
product. Exactness within the form is kept: every row goes through the same arithmetic whatever the
other rows of its call and however many (decode, speculative verification, prompt), so a row's
output is bit-identical in each, and a cache hit equals a miss bit for bit.
"""

from __future__ import annotations

import torch
from torch import nn

from inference.layers.block_linear import Q4_1Linear, Q8_0Linear, q4_1_codes

LANES = 8


def groups(blocks: int) -> list[tuple[int, int]]:
    """(blocks in the group, first block) of a row of `blocks` blocks: groups of 8, then of 4, 2, 1
    (the kernel's own rule, `groups_of` in kernels/int8_products.h)."""
    out: list[tuple[int, int]] = []
    first = 0
    for size in (8, 4, 2, 1):
        while blocks - first >= size:
            out.append((size, first))
            first += size
    return out


def _pack(
    natural: torch.Tensor, scales: torch.Tensor, minimums: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Codes one a byte in weight order (out, blocks, 32) in the kernel's layout: nibbles with
    minimums (Q4_1), bytes without (Q8_0); scales (and minimums) per lane."""
    rows, blocks = scales.shape
    packed, lane_scales, lane_minimums = [], [], []
    lane = torch.arange(LANES)
    for size, first in groups(blocks):
        per_block = LANES // size
        block = first + lane // per_block  # (8,)
        chunk = (lane % per_block) * size + torch.arange(size)[:, None]  # (steps, 8)
        elements = chunk[..., None] * 4 + torch.arange(4)  # (steps, 8, 4)
        steps = natural[:, block[None, :, None], elements].reshape(rows, size, 32)
        if minimums is None:
            packed.append(steps.reshape(rows, 32 * size))
        elif size == 1:
            packed.append(steps[:, 0])
        else:
            packed.append((steps[:, 0::2] | (steps[:, 1::2] << 4)).reshape(rows, 16 * size))
        lane_scales.append(scales[:, block])
        if minimums is not None:
            first_lane = (lane % per_block == 0)[None, :]
            zero = torch.zeros((), dtype=minimums.dtype)
            lane_minimums.append(torch.where(first_lane, minimums[:, block], zero))
    return (
        torch.cat(packed, 1).contiguous(),
        torch.cat(lane_scales, 1).contiguous(),
        None if minimums is None else torch.cat(lane_minimums, 1).contiguous(),
    )


def pack_q4_1_for_q8(
    codes: torch.Tensor, scales: torch.Tensor, minimums: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`quantize_q4_1`'s blocks in the kernel's layout (kernels/int8_products.h): codes uint8 (out,
    row bytes), scales and minimums float16 (out, 8 lanes a group)."""
    packed, lane_scales, lane_minimums = _pack(q4_1_codes(codes, scales.shape[1]), scales, minimums)
    assert lane_minimums is not None
    return packed, lane_scales, lane_minimums


def pack_q8_0_for_q8(codes: torch.Tensor, scales: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`quantize_q8_0`'s blocks in the kernel's layout: codes (int8 bytes as uint8) (out, in),
    scales float16 (out, 8 lanes a group)."""
    packed, lane_scales, _ = _pack(codes.reshape(*scales.shape, 32), scales, None)
    return packed, lane_scales


class Q4_1Q8Linear(nn.Module):
    """y = x W^T + b with W in Q4_1 blocks (those of `source`, repacked) and x quantized per block to
    8 bits in each call. Only the repacked blocks are kept: the weights it stands for are
    `source.dequantized()`."""

    def __init__(self, source: Q4_1Linear) -> None:
        super().__init__()
        self.in_features, self.out_features = source.in_features, source.out_features
        self.bias = source.bias
        self.codes, self.scales, self.minimums = pack_q4_1_for_q8(
            source.codes, source.scales, source.minimums
        )
        self.product = torch.ops.codedraft_cpu.q4_1_q8_linear.default

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (T, in) -> (T, out); each row's output is the same whatever the other rows."""
        out = self.product(x, self.codes, self.scales, self.minimums, 0)
        return out if self.bias is None else out + self.bias


class Q8_0Q8Linear(nn.Module):
    """y = x W^T + b with W in Q8_0 blocks (those of `source`, repacked) and x quantized per block to
    8 bits in each call (llama.cpp's Q8_0 x Q8_0). The weights it stands for: `source.dequantized()`."""

    def __init__(self, source: Q8_0Linear) -> None:
        super().__init__()
        self.in_features, self.out_features = source.in_features, source.out_features
        self.bias = source.bias
        self.codes, self.scales = pack_q8_0_for_q8(source.codes, source.scales)
        self.product = torch.ops.codedraft_cpu.q8_0_q8_linear.default

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (T, in) -> (T, out); each row's output is the same whatever the other rows."""
        out = self.product(x, self.codes, self.scales)
        return out if self.bias is None else out + self.bias
