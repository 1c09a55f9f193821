"""The native form's block products and row lookups against the `gguf` package's dequantization: every
block type the kernels read, for one, a few and many rows of x, odd row counts included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from gguf import GGMLQuantizationType as Q
from gguf.quants import dequantize

from inference.layers.block_linear import FEW_ROWS
from inference.layers.cpu_kernels import PORTABLE_VARIABLE, load_cpu_kernels
from inference.layers.gguf_linear import KERNEL_TYPES, BlockMatrix, GGUFEmbedding, GGUFLinear
from tests.fixtures.tiny_gguf import random_blocks

TYPES = sorted(KERNEL_TYPES)
# 37 weight rows (odd: the kernels' row splits end mid-way), 512 weights a row (two K-quant blocks).
ROWS, WIDTH = 37, 512


@pytest.fixture(scope="module", autouse=True)
def kernels() -> None:
    load_cpu_kernels()


def matrix(qtype: Q, seed: int = 0, rows: int = ROWS, width: int = WIDTH) -> tuple[BlockMatrix, torch.Tensor]:
    """A random matrix in `qtype`'s blocks and gguf's float32 dequantization of it."""
    blocks = random_blocks(rows, width, qtype, np.random.default_rng(seed))
    values = dequantize(blocks, qtype).reshape(rows, width).astype(np.float32)
    return BlockMatrix(qtype, torch.from_numpy(np.ascontiguousarray(blocks)), width), torch.from_numpy(values)


def test_the_kernels_cover_every_common_block_type() -> None:
    assert set(TYPES) == {Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.Q8_0, Q.Q4_K, Q.Q5_K, Q.Q6_K}


@pytest.mark.parametrize("qtype", TYPES, ids=lambda t: t.name)
def test_dequantized_rows_equal_gguf_bit_for_bit(qtype: Q) -> None:
    blocks, values = matrix(qtype)
    assert torch.equal(blocks.dequantized(), values)
    index = torch.tensor([[36, 0], [5, 5]])
    assert torch.equal(GGUFEmbedding(blocks)(index), values[index])


@pytest.mark.parametrize("qtype", TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("rows", [1, 3, 8, 9, FEW_ROWS, FEW_ROWS + 1, 45])
def test_product_equals_float32_on_gguf_weights(qtype: Q, rows: int) -> None:
    blocks, values = matrix(qtype)
    bias = torch.randn(ROWS, generator=torch.Generator().manual_seed(1))
    x = torch.randn(rows, WIDTH, generator=torch.Generator().manual_seed(rows))
    y = GGUFLinear(blocks, bias)(x)
    exact = x.double() @ values.double().T
    # Float32 sums of 512 products: off the exact value by at most a few units of the last place of
    # the sum of magnitudes.
    bound = (x.double().abs() @ values.double().abs().T) * 2e-6
    assert bool(((y.double() - bias.double() - exact).abs() <= bound).all())


@pytest.mark.parametrize("qtype", TYPES, ids=lambda t: t.name)
def test_a_rows_output_does_not_depend_on_the_other_rows_of_a_few_row_call(qtype: Q) -> None:
    blocks, _ = matrix(qtype)
    linear = GGUFLinear(blocks)
    x = torch.randn(FEW_ROWS, WIDTH, generator=torch.Generator().manual_seed(3))
    alone = torch.cat([linear(x[i : i + 1]) for i in range(FEW_ROWS)])
    assert torch.equal(linear(x), alone)
    assert torch.equal(linear(x[2:7]), alone[2:7])


def test_blocks_that_do_not_hold_the_input_width_are_refused() -> None:
    blocks, _ = matrix(Q.Q4_K)
    with pytest.raises(RuntimeError, match="do not hold rows of 256 weights"):
        GGUFLinear(blocks)(torch.zeros(1, 256))


_PORTABLE_RUN = """
import json, sys, numpy as np, torch
from inference.layers.cpu_kernels import load_cpu_kernels
load_cpu_kernels()
ops, out = torch.ops.codedraft_cpu, {}
for name, qtype, blocks, width, x in torch.load(sys.argv[1]):
    rows = ops.gguf_dequantize(blocks, torch.arange(blocks.shape[0]), qtype, width)
    out[name] = [ops.gguf_linear(x, blocks, qtype, 16).numpy().tobytes().hex(), rows.numpy().tobytes().hex()]
print(json.dumps(out))
"""


def test_the_portable_build_gives_the_same_numbers(tmp_path: Path) -> None:
    """Built without AVX2 (plain loops), the products and rows are the same bits as this build's."""
    cases = []
    for qtype in TYPES:
        blocks, _ = matrix(qtype, seed=2)
        x = torch.randn(5, WIDTH, generator=torch.Generator().manual_seed(4))
        cases.append((qtype.name, int(qtype), blocks.blocks, WIDTH, x))
    torch.save(cases, tmp_path / "cases.pt")
    env = {**os.environ, PORTABLE_VARIABLE: "1"}
    done = subprocess.run(
        [sys.executable, "-c", _PORTABLE_RUN, str(tmp_path / "cases.pt")],
        capture_output=True, text=True, env=env, check=True, timeout=900,
    )  # fmt: skip
    portable = json.loads(done.stdout)
    for name, qtype, blocks, width, x in cases:
        here = torch.ops.codedraft_cpu.gguf_linear(x, blocks, qtype, 16).numpy().tobytes().hex()
        rows = torch.ops.codedraft_cpu.gguf_dequantize(blocks, torch.arange(blocks.shape[0]), qtype, width)
        assert portable[name] == [here, rows.numpy().tobytes().hex()], name
