"""How the projections of a loaded model store their weights on the CPU: `--weights`, one of the forms below.

A model is built with `nn.Linear` (so Hugging Face state dicts load by name) and then packed once:
every `nn.Linear` is swapped for one of the modules below, all computing y = x W^T + b on (T, in).

* float32: the same weights, stored transposed, (in, out) contiguous. One-row products (decode,
  a keystroke's few tokens, speculative verification) read the weights in the order they are laid
  out, about twice as fast on this hardware as `F.linear`'s (out, in) layout; output equals a
  float32 product up to summation order.
* float16: fbgemm's fp16 weight kernel (`torch.ops.quantized.linear_dynamic_fp16`): weights stored
  in half precision and widened in registers, activations and accumulation stay float32, so half
  the bytes per token. Weight-only: the only loss is rounding each weight to 11 significant bits.

* q4_1: GGUF's blocks of 32 weights (`inference.layers.block_linear`): Q4_1 (4-bit codes, a scale and
  a minimum per block), or Q8_0 where only that holds a matrix exactly (and for the output projection
  of a float checkpoint), read by this project's kernels (`kernels/`, compiled on first use) with
  float32 activations and sums; the norms, few-row attention and whole few-row layer steps use them
  too. For a GGUF file stored in Q4_1 / Q8_0 these are exactly the weights the float32 form holds, at
  a sixth (Q4_1) of the bytes per token. A linear whose width is not a multiple of 32 stays float16.
* q4_1_q8: q4_1's weights, but the block products quantize each row of x to 8 bits per block of 32
  (as llama.cpp's Q4_1 x Q8_1 and Q8_0 x Q8_0) and sum the codes' products in integers
  (`inference.layers.int8_activation_linear`): several rows cost much less than in q4_1 (speculative
  verification, prompts), at the price of 8-bit activations, so its outputs are not q4_1's. Every
  row goes through the same arithmetic whatever the other rows of its call: within the form a cache
  hit equals a miss and verification equals plain decoding bit for bit.

* native: a GGUF file's matrices in their own blocks, where the memory-mapped file holds them
  (`inference.layers.gguf_linear`): Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K and Q6_K read in place by
  this project's kernels with float32 activations and sums, so the outputs are float32's on the
  file's exact weights up to rounding order; the embeddings are dequantized a looked-up row at a
  time. Built by the GGUF reader (`loading.gguf_weights.read_native_state`); a matrix in another
  type (F16, F32, a quantization without a kernel) is a plain linear packed here, in float16 where
  that holds it exactly, else float32.

* native_q8: native's blocks, but the products quantize x to 8 bits in each call as llama.cpp's do
  (per 32 values for the 32-weight types, per 256 with sums of 16 for the K-quants) and sum the
  codes' products in integers, the scales applied per sub-block in float32
  (`kernels/gguf_int8_products.h`): two to four times faster a decode step than native, at the
  price of 8-bit activations (outputs are not float32's; agreement measured in docs/models.md).
  Every row goes through the same arithmetic whatever the other rows of its call, so within the
  form a cache hit equals a miss and verification equals plain decoding bit for bit.

* q8_0: a float checkpoint quantized at load to GGUF's Q8_0 blocks by the `gguf` package's reference
  quantizer (llama.cpp's, bit for bit) and read by the native form's kernels: 1.06 bytes a weight,
  float32 activations and sums; the only loss is rounding each weight to 8 bits of its block's scale.
  A linear whose width is not a multiple of 32 stays float16.

No other int8-activation form: the maintained int8 and int4 kernels at hand either quantize the
activations too, one scale per call (fbgemm's `linear_dynamic`: greedy completions leave float32's
within a few tokens, and a row's output depends on the other rows of its call, so a cache hit would
not equal a miss), or are slower than float16 on AVX2 without VNNI (`_weight_int8pack_mm`,
`_weight_int4pack_mm_for_cpu`, torchao 0.18's int8 weight-only). See docs/benchmarks.md.

The quantized kernels are CPU-only; on other devices only float32 is accepted and the model keeps
its `nn.Linear`s.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from gguf import GGMLQuantizationType
from gguf.quants import quantize
from torch import nn

from inference.layers.block_linear import Q4_1Linear, Q8_0Linear, block_quantizable, pack_block_linear
from inference.layers.gguf_linear import BlockMatrix, ConcatenatedLinear, GGUFLinear
from inference.layers.int8_activation_linear import Q4_1Q8Linear, Q8_0Q8Linear

WEIGHT_FORMATS = ("float32", "float16", "q4_1", "q4_1_q8", "native", "native_q8", "q8_0")
# The forms served by this project's kernels (`kernels/`), which also normalise with them.
KERNEL_FORMS = frozenset({"q4_1", "q4_1_q8", "native", "native_q8", "q8_0"})
# The forms that keep a GGUF file's blocks: their matrices come packed from the reader (float32
# activations, or 8-bit ones).
NATIVE_FORM = "native"
NATIVE_Q8_FORM = "native_q8"
NATIVE_FORMS = frozenset({NATIVE_FORM, NATIVE_Q8_FORM})
# The forms whose rows must come out bit-identical whatever the other rows of a call: with 8-bit
# activations a last-bit difference upstream (SDPA against the kernels' attention) can move a code
# and so the output, so every row of these goes through the same kernels (attention included).
ROW_EXACT_FORMS = frozenset({"q4_1_q8", NATIVE_Q8_FORM})
# The linear that gives the logits: kept at 8 bits in the q4_1 form unless 4 hold it exactly.
OUTPUT_PROJECTION = "lm_head"

# What the daemon serves on the CPU unless told otherwise for a checkpoint q4_1 does not hold exactly
# (`loading.resolve_weights`), chosen by `codedraft bench versus-llamacpp` (docs/benchmarks.md):
# float16 keeps greedy output equal to float32's on the replay while reading half the bytes.
DEFAULT_CPU_WEIGHTS = "float16"


class TransposedLinear(nn.Module):
    """y = x @ W^T + b with W^T stored (in, out) contiguous."""

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight_t = nn.Parameter(linear.weight.detach().t().contiguous(), requires_grad=False)
        self.bias = None if linear.bias is None else nn.Parameter(linear.bias.detach(), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (T, in) -> (T, out)."""
        out = x @ self.weight_t  # (T, out)
        return out if self.bias is None else out + self.bias


class Float16Linear(nn.Module):
    """fbgemm's fp16-weight linear: float32 in, float32 out, weights held packed in half precision."""

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        weight = linear.weight.detach().float().contiguous()
        bias = None if linear.bias is None else linear.bias.detach().float()
        self.packed = torch.ops.quantized.linear_prepack_fp16(weight, bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (T, in) -> (T, out)."""
        return torch.ops.quantized.linear_dynamic_fp16(x, self.packed)


def _block_packer(linear: nn.Linear, name: str) -> nn.Module:
    if not block_quantizable(linear):
        return Float16Linear(linear)
    return pack_block_linear(linear, output=name == OUTPUT_PROJECTION)


def _int8_activation_packer(linear: nn.Linear, name: str) -> nn.Module:
    packed = _block_packer(linear, name)
    if isinstance(packed, Q4_1Linear):
        return Q4_1Q8Linear(packed)
    return Q8_0Q8Linear(packed) if isinstance(packed, Q8_0Linear) else packed


def _exact_packer(linear: nn.Linear, _name: str) -> nn.Module:
    """float16 where that holds the weights exactly (an F16 tensor of the file), else float32."""
    weight = linear.weight.detach().float()
    if torch.equal(weight.half().float(), weight):
        return Float16Linear(linear)
    return TransposedLinear(linear)


def _q8_0_packer(linear: nn.Linear, _name: str) -> nn.Module:
    if not block_quantizable(linear):
        return Float16Linear(linear)
    weight = linear.weight.detach().float().contiguous().numpy()
    blocks = torch.from_numpy(quantize(weight, GGMLQuantizationType.Q8_0))
    bias = None if linear.bias is None else linear.bias.detach()
    return GGUFLinear(BlockMatrix(GGMLQuantizationType.Q8_0, blocks, linear.in_features), bias)


_PACKERS: dict[str, Callable[[nn.Linear, str], nn.Module]] = {
    "float32": lambda linear, _name: TransposedLinear(linear),
    "float16": lambda linear, _name: Float16Linear(linear),
    "q4_1": _block_packer,
    "q4_1_q8": _int8_activation_packer,
    NATIVE_FORM: _exact_packer,
    NATIVE_Q8_FORM: _exact_packer,
    "q8_0": _q8_0_packer,
}


def concat_linears(*linears: nn.Module) -> nn.Module:
    """One linear whose output is the outputs of `linears` side by side (they share the input), so
    one matrix product replaces several; linears already packed (a GGUF file's blocks) are kept
    apart, each read where it lies, and their outputs joined."""
    if not all(isinstance(linear, nn.Linear) for linear in linears):
        widths = [int(linear.out_features) for linear in linears]  # type: ignore[arg-type]
        return ConcatenatedLinear(list(linears), int(linears[0].in_features), sum(widths))  # type: ignore[arg-type]
    return _stacked(*(linear for linear in linears if isinstance(linear, nn.Linear)))


def _stacked(*linears: nn.Linear) -> nn.Linear:
    first = linears[0]
    fused = nn.Linear(
        first.in_features,
        sum(linear.out_features for linear in linears),
        bias=first.bias is not None,
        device=first.weight.device,
        dtype=first.weight.dtype,
    )
    fused.weight = nn.Parameter(
        torch.cat([linear.weight.detach() for linear in linears]), requires_grad=False
    )
    if first.bias is not None:
        biases = [linear.bias.detach() for linear in linears if linear.bias is not None]
        fused.bias = nn.Parameter(torch.cat(biases), requires_grad=False)
    return fused


def pack_linears(model: nn.Module, weights: str) -> None:
    """Replace every `nn.Linear` of `model` (CPU, float32) by its `weights` form, in place.

    A linear that shares its weight with another module (a tied `lm_head`) gets its own packed copy.
    """
    if weights not in _PACKERS:
        raise ValueError(f"unknown weights format {weights!r} (choose from {', '.join(WEIGHT_FORMATS)})")
    packer = _PACKERS[weights]
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.Linear):
                setattr(parent, name, packer(child, name))
