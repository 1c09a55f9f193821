"""Linears with GGUF-style block-quantized weights for the CPU: the `q4_1` weights form.

Each row of W is cut into blocks of 32 weights, quantized as llama.cpp's reference quantizer does:
* Q4_1: 4-bit codes q, a float16 scale d and minimum m per block; w = d q + m (0.625 bytes a weight).
* Q8_0: 8-bit codes and a float16 scale; w = d q (1.06 bytes a weight).

`pack_block_linear` gives each linear the first of these that holds its weights exactly: for a GGUF
stored in Q4_1 / Q8_0, quantizing the dequantized values gives back the file's own blocks (a block's
extremes are always codes 0 and 15, or ±127), so the weights are those of the float32 form. Weights
that neither holds exactly (a float checkpoint) become Q4_1, the output projection Q8_0, as llama.cpp
keeps it. Activations and sums stay float32 (`kernels/`): with exact weights, outputs differ from
float32's only in summation order.
"""

from __future__ import annotations

import torch
from torch import nn

from inference.layers.cpu_kernels import load_cpu_kernels

BLOCK = 32
# Rows of x up to which a product streams the quantized weights (decode, keystrokes, speculative
# verification); beyond, tiles are dequantized for ATen's float32 product (prompts).
FEW_ROWS = 16


def block_quantizable(linear: nn.Linear) -> bool:
    """Whether `linear`'s rows split into whole blocks."""
    return linear.in_features % BLOCK == 0


def _blocks(weight: torch.Tensor) -> torch.Tensor:
    rows, columns = weight.shape
    return weight.detach().float().reshape(rows, columns // BLOCK, BLOCK)


def _inverse(scale: torch.Tensor) -> torch.Tensor:
    return torch.where(scale > 0, 1.0 / torch.where(scale > 0, scale, 1.0), 0.0)


def quantize_q4_1(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(codes uint8 (out, in/2) in the kernel's order, scales and minimums float16 (out, in/32))."""
    blocks = _blocks(weight)
    low, high = blocks.amin(-1), blocks.amax(-1)
    scale = (high - low) / 15
    codes = ((blocks - low[..., None]) * _inverse(scale)[..., None] + 0.5).floor().clamp(0, 15)
    c = codes.to(torch.uint8).reshape(*codes.shape[:2], 4, 8)
    # byte 2i: weights i | 16 + i; byte 2i + 1: weights 8 + i | 24 + i (see kernels/block_products.h).
    packed = torch.stack([c[..., 0, :] | (c[..., 2, :] << 4), c[..., 1, :] | (c[..., 3, :] << 4)], -1)
    return packed.reshape(weight.shape[0], -1).contiguous(), scale.half(), low.half()


def q4_1_codes(codes: torch.Tensor, blocks: int) -> torch.Tensor:
    """`quantize_q4_1`'s packed codes as one code a byte in weight order, uint8 (out, blocks, 32)."""
    pairs = codes.reshape(codes.shape[0], blocks, 8, 2)
    low, high = pairs & 0x0F, pairs >> 4
    order = torch.stack([low[..., 0], low[..., 1], high[..., 0], high[..., 1]], -2)  # (.., 4, 8)
    return order.reshape(codes.shape[0], blocks, BLOCK)


def dequantize_q4_1(codes: torch.Tensor, scales: torch.Tensor, minimums: torch.Tensor) -> torch.Tensor:
    """The float32 weights (out, in) that `quantize_q4_1`'s output stands for."""
    order = q4_1_codes(codes, scales.shape[1])
    values = order.float() * scales.float()[..., None] + minimums.float()[..., None]
    return values.reshape(scales.shape[0], -1)


def quantize_q8_0(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(codes as uint8 bytes of int8 (out, in), scales float16 (out, in/32))."""
    blocks = _blocks(weight)
    scale = blocks.abs().amax(-1) / 127
    codes = (blocks * _inverse(scale)[..., None]).round().clamp(-127, 127).to(torch.int8)
    return codes.view(torch.uint8).reshape(weight.shape).contiguous(), scale.half()


def dequantize_q8_0(codes: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """The float32 weights (out, in) that `quantize_q8_0`'s output stands for."""
    values = codes.view(torch.int8).reshape(*scales.shape, BLOCK).float() * scales.float()[..., None]
    return values.reshape(scales.shape[0], -1)


class _BlockLinear(nn.Module):
    """The blocks are plain tensor attributes, not buffers: the kernels are CPU-only and a decode step
    reads them about 200 times, so they skip `nn.Module.__getattr__`."""

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        if not block_quantizable(linear):
            raise ValueError(f"in_features {linear.in_features} is not a multiple of {BLOCK}")
        load_cpu_kernels()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.bias = (
            None if linear.bias is None else nn.Parameter(linear.bias.detach().float(), requires_grad=False)
        )


class Q4_1Linear(_BlockLinear):
    """y = x W^T + b with W in Q4_1 blocks."""

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__(linear)
        self.codes, self.scales, self.minimums = quantize_q4_1(linear.weight)
        self.product = torch.ops.codedraft_cpu.q4_1_linear.default

    def dequantized(self) -> torch.Tensor:
        """The weights this layer multiplies by, float32 (out, in)."""
        return dequantize_q4_1(self.codes, self.scales, self.minimums)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (T, in) -> (T, out)."""
        out = self.product(x, self.codes, self.scales, self.minimums, FEW_ROWS)
        return out if self.bias is None else out + self.bias


class Q8_0Linear(_BlockLinear):
    """y = x W^T + b with W in Q8_0 blocks."""

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__(linear)
        self.codes, self.scales = quantize_q8_0(linear.weight)
        self.product = torch.ops.codedraft_cpu.q8_0_linear.default

    def dequantized(self) -> torch.Tensor:
        """The weights this layer multiplies by, float32 (out, in)."""
        return dequantize_q8_0(self.codes, self.scales)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (T, in) -> (T, out)."""
        out = self.product(x, self.codes, self.scales, FEW_ROWS)
        return out if self.bias is None else out + self.bias


def pack_block_linear(linear: nn.Linear, output: bool) -> nn.Module:
    """`linear` (in_features a multiple of 32) in the first block form that holds its weights exactly;
    else Q4_1, or Q8_0 for the output projection (`output`)."""
    weight = linear.weight.detach().float()
    q4 = Q4_1Linear(linear)
    if torch.equal(q4.dequantized(), weight):
        return q4
    q8 = Q8_0Linear(linear)
    return q8 if output or torch.equal(q8.dequantized(), weight) else q4
