"""Linears and embeddings whose weights stay in a GGUF file's own blocks: the `native` weights form.

A `BlockMatrix` is a weight matrix as the file stores it: (rows, bytes a row) uint8, each row its
blocks in file order, usually a view of the memory-mapped file itself (nothing is copied or
unpacked). The kernels (`kernels/gguf_products.h`) read the blocks of Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
Q4_K, Q5_K and Q6_K in place with float32 activations and sums: up to `FEW_ROWS` rows of x each
output is the blocks' own factors applied to their products with x, beyond that tiles are
dequantized exactly as the `gguf` package dequantizes them and multiplied by ATen's float32 product.
Either way the output equals a float32 product on gguf's dequantized weights up to rounding order,
and a row's output in a few-row call does not depend on the other rows of the call.

With `int8_activations` (the `native_q8` form) the same blocks multiply x quantized to 8 bits in each
call, as llama.cpp's CPU products do (`kernels/gguf_int8_products.h`): per run of 32 values for the
32-weight types, per 256 with sums of 16 for the K-quants, integer dot products on the codes, the
scales applied per sub-block in float32. Outputs then differ from the float32 product by the
rounding of x (at most half a step, max|x| / 254 of its run, per value), but every row goes through
the same arithmetic alone, whatever the other rows of its call and however many. A Q4_K, Q6_K, Q8_0
or Q5_0 matrix is repacked once at load for these products, eight rows' blocks interleaved
(`kernels/gguf_repacked_*.h`): the same outputs bit for bit, fewer instructions a weight, and the
repacked bytes replace the file's (the same size, 2.8 % more for Q4_K; no float copy).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import torch
from gguf import GGMLQuantizationType
from torch import nn

from inference.layers.block_linear import FEW_ROWS
from inference.layers.cpu_kernels import load_cpu_kernels

# The block types the kernels read; a matrix in another type is served dequantized (float32).
KERNEL_TYPES = frozenset(
    GGMLQuantizationType[name] for name in "Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q4_K Q5_K Q6_K".split()
)
# The block types the 8-bit-activation products read repacked (eight rows interleaved).
REPACKED_TYPES = frozenset(GGMLQuantizationType[name] for name in "Q5_0 Q8_0 Q4_K Q6_K".split())


@dataclass(frozen=True)
class BlockMatrix:
    """A (rows, columns) weight matrix in a GGUF block type: `blocks` (rows, bytes a row) uint8."""

    qtype: GGMLQuantizationType
    blocks: torch.Tensor
    columns: int

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns), as the float matrix it stands for."""
        return int(self.blocks.shape[0]), self.columns

    def rows(self, index: torch.Tensor) -> torch.Tensor:
        """The weight rows `index` (int64, any shape) as float32 (*index.shape, columns), exactly gguf's
        dequantized values."""
        flat = torch.ops.codedraft_cpu.gguf_dequantize(
            self.blocks, index.reshape(-1), int(self.qtype), self.columns
        )
        return flat.view(*index.shape, self.columns)

    def dequantized(self) -> torch.Tensor:
        """The whole matrix as float32 (rows, columns)."""
        return self.rows(torch.arange(self.shape[0]))


class GGUFLinear(nn.Module):
    """y = x W^T + b with W a `BlockMatrix` read in place (a plain attribute, not a buffer: it is not
    the module's to save, and a decode step skips `nn.Module.__getattr__`).

    With `int8_activations` and `repack`, a matrix in a `REPACKED_TYPES` type `will_repack`: `repack()`
    (once, at load: `repack_in_background`) replaces the file's blocks by their repacked bytes
    (`blocks`, 1-D), after which only those are kept. The outputs are the same bits either way, so a
    layer may be repacked between two calls; `rows` reads either (a tied head's embedding)."""

    # x may be a view whose rows are not contiguous (columns of a wider tensor): the kernels read it in
    # place or copy it, the same numbers either way.
    reads_row_views = True

    def __init__(
        self,
        matrix: BlockMatrix,
        bias: torch.Tensor | None = None,
        int8_activations: bool = False,
        repack: bool = True,
    ) -> None:
        super().__init__()
        if matrix.qtype not in KERNEL_TYPES:
            raise ValueError(f"no kernel for {matrix.qtype.name} blocks")
        load_cpu_kernels()
        self.qtype, self.columns = int(matrix.qtype), matrix.columns
        self.out_features, self.in_features = matrix.shape
        self.will_repack = int8_activations and repack and matrix.qtype in REPACKED_TYPES
        # (repacked, blocks), replaced as one so that a call sees one form or the other.
        self._form = (False, matrix.blocks)
        self._file_matrix: BlockMatrix | None = matrix  # dropped once repacked
        self.bias = None if bias is None else nn.Parameter(bias.detach().float(), requires_grad=False)
        self.int8_activations = int8_activations
        self.product = torch.ops.codedraft_cpu.gguf_linear.default
        self.int8_product = torch.ops.codedraft_cpu.gguf_q8_linear.default
        self.repacked_product = torch.ops.codedraft_cpu.gguf_q8_linear_repacked.default
        self.repacked_product_into = torch.ops.codedraft_cpu.gguf_q8_linear_repacked_into.default

    @property
    def repacked(self) -> bool:
        """Whether the products read the repacked bytes now."""
        return self._form[0]

    @property
    def blocks(self) -> torch.Tensor:
        """The bytes the products read: the file's blocks (rows, bytes a row), or repacked (1-D)."""
        return self._form[1]

    def repack(self) -> None:
        """Repack the blocks if this layer `will_repack` and has not yet (idempotent)."""
        matrix = self._file_matrix
        if not self.will_repack or self.repacked or matrix is None:
            return
        self._form = (True, torch.ops.codedraft_cpu.gguf_q8_repack(matrix.blocks, self.qtype))
        self._file_matrix = None

    @property
    def matrix(self) -> BlockMatrix:
        """The weights as the file stores them (unpacked again, a copy, if this layer holds them repacked)."""
        repacked, blocks = self._form
        if not repacked:
            return self._file_matrix or BlockMatrix(GGMLQuantizationType(self.qtype), blocks, self.columns)
        unpack = torch.ops.codedraft_cpu.gguf_q8_unpack
        unpacked = unpack(blocks, self.qtype, self.out_features, self.columns)
        return BlockMatrix(GGMLQuantizationType(self.qtype), unpacked, self.columns)

    @property
    def shape(self) -> tuple[int, int]:
        """(out, in), as the float matrix it stands for."""
        return self.out_features, self.in_features

    def rows(self, index: torch.Tensor) -> torch.Tensor:
        """The weight rows `index` (int64, any shape) as float32 (*index.shape, in): gguf's values."""
        repacked, blocks = self._form
        if not repacked:
            return BlockMatrix(GGMLQuantizationType(self.qtype), blocks, self.columns).rows(index)
        flat = torch.ops.codedraft_cpu.gguf_dequantize_repacked(
            blocks, index.reshape(-1), self.qtype, self.out_features, self.columns
        )
        return flat.view(*index.shape, self.columns)

    def dequantized(self) -> torch.Tensor:
        """The weights this layer multiplies by, float32 (out, in)."""
        return self.rows(torch.arange(self.out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (T, in) -> (T, out)."""
        repacked, blocks = self._form
        if repacked:
            out = self.repacked_product(x, blocks, self.qtype, self.out_features)
        elif self.int8_activations:
            out = self.int8_product(x, blocks, self.qtype)
        else:
            out = self.product(x, blocks, self.qtype, FEW_ROWS)
        return out if self.bias is None else out + self.bias

    def forward_into(self, x: torch.Tensor, out: torch.Tensor, first: int) -> bool:
        """Write `forward(x)` into columns first .. first + out_features of `out` (T, N) and say True, where
        the kernel can (repacked, no bias); else write nothing and say False."""
        repacked, blocks = self._form
        if not repacked or self.bias is not None:
            return False
        self.repacked_product_into(x, blocks, self.qtype, self.out_features, out, first)
        return True


class GGUFEmbedding(nn.Module):
    """An embedding table left in its blocks: a lookup dequantizes only the rows it reads (a row costs
    what its blocks cost, so the table is never widened to float). `matrix`: the file's blocks, or a
    tied output head that holds them (repacked or not)."""

    def __init__(self, matrix: BlockMatrix | GGUFLinear) -> None:
        super().__init__()
        load_cpu_kernels()
        self.matrix = matrix
        self.num_embeddings, self.embedding_dim = matrix.shape

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (...) int64 -> (..., embedding_dim) float32."""
        return self.matrix.rows(ids)


class ConcatenatedLinear(nn.Module):
    """Several linears sharing one input, their outputs side by side: q|k|v or gate|up whose parts
    the file stores apart (often in different block types), each read where it lies."""

    def __init__(self, parts: list[nn.Module], in_features: int, out_features: int) -> None:
        super().__init__()
        self.parts = nn.ModuleList(parts)
        self.in_features, self.out_features = in_features, out_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (T, in) -> (T, sum of the parts' out). Repacked parts write their columns in place (a
        prompt's output is tens of MB, and fresh pages for each part and again for a concatenation
        cost more than its copy); the others are copied in."""
        out = x.new_empty(*x.shape[:-1], self.out_features)
        flat = out.view(-1, self.out_features)
        first = 0
        for part in self.parts:
            width = int(part.out_features)  # type: ignore[arg-type]
            if not (isinstance(part, GGUFLinear) and x.dim() == 2 and part.forward_into(x, flat, first)):
                out[..., first : first + width] = part(x)
            first += width
        return out


def repack_in_background(linears: list[GGUFLinear]) -> threading.Thread:
    """Repack `linears` one after the other on a thread of their own, so that loading is not held up
    (fresh memory costs about a second a GB to touch): their outputs do not change meanwhile. The
    thread is not a daemon, so the process waits for it before exiting."""

    def repack_all() -> None:
        for linear in linears:
            linear.repack()

    thread = threading.Thread(target=repack_all, name="codedraft-repack")
    thread.start()
    return thread
