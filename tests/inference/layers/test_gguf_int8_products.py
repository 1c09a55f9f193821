"""The native_q8 form's products (GGUF blocks times 8-bit activations) against the same integer and
float32 arithmetic written out in numpy from the format (bit for bit), against the float32 product on
gguf's dequantized weights within the rounding of x, and the portable build against this one."""

from __future__ import annotations

import itertools
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

from inference.layers.cpu_kernels import PORTABLE_VARIABLE, load_cpu_kernels
from inference.layers.gguf_linear import (
    KERNEL_TYPES,
    BlockMatrix,
    ConcatenatedLinear,
    GGUFEmbedding,
    GGUFLinear,
)
from tests.fixtures.gguf_codes import k_parts, legacy_parts
from tests.fixtures.tiny_gguf import random_blocks

TYPES = sorted(KERNEL_TYPES)
K_QUANTS = {Q.Q4_K, Q.Q5_K, Q.Q6_K}
# 37 weight rows (odd: the kernel's tiles end mid-way), 768 weights a row (three K-quant blocks).
ROWS, WIDTH = 37, 768


@pytest.fixture(scope="module", autouse=True)
def kernels() -> None:
    load_cpu_kernels()


def _blocks(qtype: Q, seed: int = 0) -> np.ndarray:
    return np.ascontiguousarray(random_blocks(ROWS, WIDTH, qtype, np.random.default_rng(seed)))


def _x(rows: int, seed: int) -> np.ndarray:
    # Activations of mixed sizes, a zero run among them (no scale to divide by).
    x = np.random.default_rng(seed).standard_normal((rows, WIDTH)).astype(np.float32)
    powers = np.random.default_rng(seed + 1).integers(-2, 3, size=(rows, WIDTH // 32, 1))
    x *= (np.float32(3.0) ** np.repeat(powers, 32, axis=2).reshape(rows, WIDTH)).astype(np.float32)
    x[0, 32:64] = 0
    return x


def quantize_runs(x: np.ndarray, run: int) -> tuple[np.ndarray, np.ndarray]:
    """x (T, K) per run: codes (T, runs, run) int64 and scales (T, runs) float32 (activation_codes.h)."""
    runs = x.reshape(x.shape[0], -1, run)
    d = np.abs(runs).max(axis=-1) / np.float32(127)
    safe = np.where(d != 0, d, np.float32(1))
    inverse = np.where(d != 0, np.float32(1) / safe, np.float32(0)).astype(np.float32)
    return np.rint(runs * inverse[..., None]).astype(np.int64), d.astype(np.float32)


def _tree(acc: np.ndarray) -> np.ndarray:
    """horizontal_sum's order over the last axis of 8 lanes."""
    quad = acc[..., :4] + acc[..., 4:]
    return (quad[..., 0] + quad[..., 2]) + (quad[..., 1] + quad[..., 3])


def reference(x: np.ndarray, blocks: np.ndarray, qtype: Q) -> np.ndarray:
    """y (T, N) by the arithmetic gguf_int8_products.h states, in numpy."""
    if qtype in K_QUANTS:
        return _reference_k(x, blocks, qtype)
    codes, d, m = legacy_parts(blocks, qtype)  # (N, B, 32), (N, B)
    xq, dx = quantize_runs(x, 32)  # (T, B, 32), (T, B)
    # lanes (T, N, B, 8): each lane the products of 4 codes
    lanes = np.einsum("nbj,tbj->tnbj", codes, xq).reshape(*x.shape[:1], *codes.shape[:2], 8, 4).sum(-1)
    acc = np.zeros((2, x.shape[0], codes.shape[0], 8), dtype=np.float32)  # even, odd blocks
    offset = np.zeros((x.shape[0], codes.shape[0]), dtype=np.float32)
    s = dx * xq.sum(-1).astype(np.float32)  # (T, B)
    for b in range(codes.shape[1]):
        scale = d[None, :, b] * dx[:, None, b]  # (T, N) float32
        acc[b % 2] = acc[b % 2] + lanes[:, :, b].astype(np.float32) * scale[..., None]
        if m is not None:
            offset = offset + m[None, :, b] * s[:, None, b]
    return _tree(acc[0] + acc[1]) + offset


def _reference_k(x: np.ndarray, blocks: np.ndarray, qtype: Q) -> np.ndarray:
    parts = k_parts(blocks, qtype)
    codes = parts["codes"]  # (N, S, 8, 32)
    xq, dx = quantize_runs(x, 256)  # (T, S, 256), (T, S)
    xq = xq.reshape(*xq.shape[:2], 8, 32)
    sums16 = xq.reshape(*xq.shape[:2], 16, 16).sum(-1)  # (T, S, 16)
    products = np.einsum("nsuj,tsuj->tnsuj", codes, xq).reshape(x.shape[0], *codes.shape[:3], 8, 4).sum(-1)
    if qtype == Q.Q6_K:
        sc = parts["scales"]  # (N, S, 16)
        lane_scales = np.repeat(sc.reshape(*sc.shape[:2], 8, 2), 4, axis=-1)  # (N, S, 8 subs, 8 lanes)
        lanes = (products * lane_scales[None]).sum(3)  # (T, N, S, 8)
        bias = (sc[None] * sums16[:, None]).reshape(x.shape[0], *sc.shape[:2], 8, 2).sum(-1)
        lanes = lanes - 32 * bias
    else:
        lanes = (products * parts["scales"][None, ..., None]).sum(3)
        minimums = (parts["mins"][None] * xq.sum(-1)[:, None]).sum(-1)  # (T, N, S)
    acc = np.zeros((x.shape[0], codes.shape[0], 8), dtype=np.float32)
    offset = np.zeros((x.shape[0], codes.shape[0]), dtype=np.float32)
    for sb in range(codes.shape[1]):
        scale = parts["d"][None, :, sb] * dx[:, None, sb]
        acc = acc + lanes[:, :, sb].astype(np.float32) * scale[..., None]
        if qtype != Q.Q6_K:
            step = parts["dmin"][None, :, sb] * dx[:, None, sb]
            offset = offset + minimums[:, :, sb].astype(np.float32) * step
    return _tree(acc) - offset


def _product(x: np.ndarray, blocks: np.ndarray, qtype: Q) -> np.ndarray:
    out = torch.ops.codedraft_cpu.gguf_q8_linear(torch.from_numpy(x), torch.from_numpy(blocks), int(qtype))
    return out.numpy()


@pytest.mark.parametrize("qtype", TYPES, ids=lambda t: t.name)
@pytest.mark.parametrize("rows", [1, 3, 8, 9, 17])
def test_products_equal_the_integer_arithmetic_written_out_bit_for_bit(qtype: Q, rows: int) -> None:
    blocks, x = _blocks(qtype), _x(rows, seed=rows)
    expected = reference(x, blocks, qtype)
    assert np.array_equal(_product(x, blocks, qtype), expected)


@pytest.mark.parametrize("qtype", TYPES, ids=lambda t: t.name)
def test_activation_codes_round_halves_to_even_in_every_lane(qtype: Q) -> None:
    """Runs whose step is exactly 1 (max|x| = 127) and whose other values are halves: each code is
    the even neighbour (the vector quantization rounds as nearbyint does), in every position of a run."""
    rng = np.random.default_rng(7)
    x = (rng.integers(-127, 127, size=(5, WIDTH)) + np.float32(0.5)).astype(np.float32)
    x[:, ::32] = np.float32(127)  # every run of 32 (and of 256) has max|x| = 127: d = 1, x / d = x
    x[1, 40:48] = np.float32(-0.5)
    x[2, 64:96] = 0
    blocks = _blocks(qtype)
    assert np.array_equal(_product(x, blocks, qtype), reference(x, blocks, qtype))


@pytest.mark.parametrize("qtype", TYPES, ids=lambda t: t.name)
def test_products_are_the_float32_products_within_the_rounding_of_x(qtype: Q) -> None:
    """Each x_j is replaced by dx q_j, |x_j - dx q_j| <= dx / 2 (dx its run's step), so the output is
    off the float32 product on the dequantized weights by at most sum_j |w_j| dx_j / 2, plus the
    float32 rounding of both sums."""
    blocks, x = _blocks(qtype, seed=1), _x(5, seed=9)
    weights = dequantize(blocks, qtype).reshape(ROWS, WIDTH).astype(np.float64)
    run = 256 if qtype in K_QUANTS else 32
    _, dx = quantize_runs(x, run)
    steps = np.repeat(dx.astype(np.float64), run, axis=1)  # (T, K)
    bound = 0.5 * (1 + 1e-6) * (steps @ np.abs(weights).T) + 1e-5 * (np.abs(x) @ np.abs(weights).T)
    exact = x.astype(np.float64) @ weights.T
    error = np.abs(_product(x, blocks, qtype) - exact)
    assert bool((error <= bound).all())
    assert float(error.max()) > 0  # the activations were rounded: not the float32 product


@pytest.mark.parametrize("qtype", TYPES, ids=lambda t: t.name)
def test_a_rows_output_does_not_depend_on_the_other_rows_of_its_call(qtype: Q) -> None:
    blocks = BlockMatrix(qtype, torch.from_numpy(_blocks(qtype, seed=2)), WIDTH)
    linear = GGUFLinear(blocks, int8_activations=True)
    x = torch.from_numpy(_x(19, seed=5))
    alone = torch.cat([linear(x[i : i + 1]) for i in range(19)])
    assert torch.equal(linear(x), alone)
    assert torch.equal(linear(x[3:12]), alone[3:12])


def test_a_zero_row_gives_zeros_and_bad_shapes_are_refused() -> None:
    blocks = torch.from_numpy(_blocks(Q.Q4_K))
    assert torch.equal(torch.ops.codedraft_cpu.gguf_q8_linear(torch.zeros(2, WIDTH), blocks, int(Q.Q4_K)),
                       torch.zeros(2, ROWS))  # fmt: skip
    with pytest.raises(RuntimeError, match="do not hold rows of 512 weights"):
        torch.ops.codedraft_cpu.gguf_q8_linear(torch.zeros(1, 512), blocks, int(Q.Q4_K))
    with pytest.raises(RuntimeError, match="x must be"):
        torch.ops.codedraft_cpu.gguf_q8_linear(torch.zeros(WIDTH), blocks, int(Q.Q4_K))


def _repacked_product(x: np.ndarray, blocks: np.ndarray, qtype: Q) -> np.ndarray:
    ops = torch.ops.codedraft_cpu
    packed = ops.gguf_q8_repack(torch.from_numpy(blocks), int(qtype))
    return ops.gguf_q8_linear_repacked(torch.from_numpy(x), packed, int(qtype), blocks.shape[0]).numpy()


REPACKED = [Q.Q5_0, Q.Q8_0, Q.Q4_K, Q.Q6_K]


@pytest.mark.parametrize("qtype", REPACKED, ids=lambda t: t.name)
@pytest.mark.parametrize("rows", [1, 5, 9])
def test_repacked_products_read_a_column_slice_in_place_with_the_same_numbers(qtype: Q, rows: int) -> None:
    """x given as columns of a wider tensor (the MLP's activation in gate|up's output): the same
    outputs as its contiguous copy, for 13 weight rows (a group of 8 and 5 left over)."""
    ops = torch.ops.codedraft_cpu
    blocks = np.ascontiguousarray(random_blocks(13, WIDTH, qtype, np.random.default_rng(3)))
    packed = ops.gguf_q8_repack(torch.from_numpy(blocks), int(qtype))
    wide = torch.from_numpy(_x(rows, seed=rows + 50)).repeat(1, 3)
    view = wide[:, WIDTH // 2 : WIDTH // 2 + WIDTH]
    assert view.stride(0) == 3 * WIDTH
    expected = ops.gguf_q8_linear(view.contiguous(), torch.from_numpy(blocks), int(qtype))
    assert torch.equal(ops.gguf_q8_linear_repacked(view, packed, int(qtype), 13), expected)


# Rows in whole groups of 8, with a few left over, fewer than 8, and odd; x rows around the tile of 4.
@pytest.mark.parametrize("qtype", REPACKED, ids=lambda t: t.name)
@pytest.mark.parametrize("weight_rows", [1, 7, 8, 16, 37])
@pytest.mark.parametrize("rows", [1, 2, 3, 4, 5, 9, 64])
def test_repacked_products_equal_the_files_blocks_bit_for_bit(qtype: Q, weight_rows: int, rows: int) -> None:
    blocks, x = _blocks(qtype, seed=weight_rows)[:weight_rows], _x(rows, seed=rows + 20)
    repacked = _repacked_product(x, blocks, qtype)
    assert np.array_equal(repacked, _product(x, blocks, qtype))
    assert np.array_equal(repacked, reference(x, blocks, qtype))


@pytest.mark.parametrize("qtype", REPACKED, ids=lambda t: t.name)
def test_repacking_keeps_every_byte_of_the_file(qtype: Q) -> None:
    ops = torch.ops.codedraft_cpu
    # Q4_K: 32 bytes more a group's super-block (its scales and minimums as bytes); the others: none.
    extra = 32 if qtype == Q.Q4_K else 0
    for weight_rows in (1, 8, 37):
        blocks = torch.from_numpy(_blocks(qtype, seed=3)[:weight_rows].copy())
        packed = ops.gguf_q8_repack(blocks, int(qtype))
        assert packed.numel() == blocks.numel() + (weight_rows // 8) * (WIDTH // 256) * extra
        assert torch.equal(ops.gguf_q8_unpack(packed, int(qtype), weight_rows, WIDTH), blocks)
        index = torch.tensor([weight_rows - 1, 0, weight_rows // 2])
        rows = ops.gguf_dequantize_repacked(packed, index, int(qtype), weight_rows, WIDTH)
        assert torch.equal(rows, ops.gguf_dequantize(blocks, index, int(qtype), WIDTH))
    with pytest.raises(RuntimeError, match="only Q5_0, Q8_0, Q4_K and Q6_K rows are repacked"):
        ops.gguf_q8_repack(torch.from_numpy(_blocks(Q.Q5_K)), int(Q.Q5_K))
    with pytest.raises(RuntimeError, match="do not hold 36 rows"):
        ops.gguf_q8_linear_repacked(torch.zeros(1, WIDTH), packed, int(qtype), 36)


def test_small_repacked_matrices_share_their_2_mib_pages() -> None:
    # Each its own mapping, every small matrix would commit a 2 MiB page of its own (huge_pages.h).
    ops = torch.ops.codedraft_cpu
    blocks = torch.from_numpy(_blocks(Q.Q8_0, seed=4))
    packed = [ops.gguf_q8_repack(blocks, int(Q.Q8_0)) for _ in range(4)]
    addresses = [p.data_ptr() for p in packed]
    assert all(a % 64 == 0 for a in addresses)
    # Cut one after another (at 64-byte boundaries): at most one of the three steps starts a new mapping.
    step = -(-blocks.numel() // 64) * 64
    assert sum(b - a == step for a, b in itertools.pairwise(addresses)) >= 2
    for p in packed:
        assert torch.equal(ops.gguf_q8_unpack(p, int(Q.Q8_0), ROWS, WIDTH), blocks)


@pytest.mark.parametrize("qtype", REPACKED, ids=lambda t: t.name)
def test_a_linear_with_8_bit_activations_keeps_only_its_repacked_blocks(qtype: Q) -> None:
    blocks = _blocks(qtype, seed=6)
    matrix = BlockMatrix(qtype, torch.from_numpy(blocks), WIDTH)
    linear = GGUFLinear(matrix, int8_activations=True)
    x = _x(4, seed=8)
    before = linear(torch.from_numpy(x))
    assert linear.will_repack and not linear.repacked and linear.matrix is matrix
    linear.repack()
    assert linear.repacked and linear.blocks.dim() == 1
    assert not GGUFLinear(matrix, int8_activations=True, repack=False).will_repack
    assert not GGUFLinear(matrix).will_repack  # float32 activations read the file's blocks
    assert torch.equal(linear.matrix.blocks, matrix.blocks)
    expected = torch.from_numpy(dequantize(blocks, qtype).reshape(ROWS, WIDTH))
    assert torch.equal(linear.dequantized(), expected)
    ids = torch.tensor([[3, 36], [0, 8]])
    assert torch.equal(GGUFEmbedding(linear)(ids), expected[ids])  # a tied head's embedding reads them
    assert np.array_equal(linear(torch.from_numpy(x)).numpy(), reference(x, blocks, qtype))
    assert torch.equal(linear(torch.from_numpy(x)), before)


def test_concatenated_parts_write_their_columns_as_their_own_products_give_them() -> None:
    # Repacked parts of different types write in place; a part with a bias and one not yet repacked
    # are copied in: the same bits as the parts' outputs side by side, for tiles and odd rows of x.
    def part(qtype: Q, rows: int, seed: int, bias: bool = False, repack: bool = True) -> GGUFLinear:
        matrix = BlockMatrix(qtype, torch.from_numpy(_blocks(qtype, seed=seed)[:rows].copy()), WIDTH)
        linear = GGUFLinear(matrix, torch.randn(rows) if bias else None, int8_activations=True)
        if repack:
            linear.repack()
        return linear

    parts = [part(Q.Q5_0, 16, 1), part(Q.Q4_K, 37, 2), part(Q.Q6_K, 9, 3, bias=True), part(Q.Q8_0, 8, 4)]
    parts.append(part(Q.Q4_K, 7, 5, repack=False))
    concatenated = ConcatenatedLinear(parts, WIDTH, 16 + 37 + 9 + 8 + 7)  # type: ignore[arg-type]
    for rows in (1, 7, 13):
        x = torch.from_numpy(_x(rows, seed=rows))
        assert torch.equal(concatenated(x), torch.cat([p(x) for p in parts], dim=-1))
    out = torch.zeros(3, 20)
    ops = torch.ops.codedraft_cpu
    ops.gguf_q8_linear_repacked_into(x[:3], parts[0].blocks, int(Q.Q5_0), 16, out, 4)
    assert torch.equal(out[:, 4:], parts[0](x[:3])) and not out[:, :4].any()
    with pytest.raises(RuntimeError, match="out must be"):
        ops.gguf_q8_linear_repacked_into(x[:3], parts[0].blocks, int(Q.Q5_0), 16, out, 5)


_PORTABLE_RUN = """
import json, sys, torch
from inference.layers.cpu_kernels import load_cpu_kernels
load_cpu_kernels()
ops = torch.ops.codedraft_cpu
out = {}
for name, qtype, blocks, x in torch.load(sys.argv[1]):
    out[name] = ops.gguf_q8_linear(x, blocks, qtype).numpy().tobytes().hex()
    if name in ("Q5_0", "Q8_0", "Q4_K", "Q6_K"):
        packed = ops.gguf_q8_repack(blocks, qtype)
        repacked = ops.gguf_q8_linear_repacked(x, packed, qtype, blocks.shape[0])
        out["repacked " + name] = repacked.numpy().tobytes().hex()
print(json.dumps(out))
"""


def test_the_portable_build_gives_the_same_numbers(tmp_path: Path) -> None:
    """Built without AVX2 (plain loops), the products are the same bits as this build's (VNNI or AVX2),
    repacked Q5_0, Q8_0, Q4_K and Q6_K rows too."""
    x = torch.from_numpy(_x(9, seed=4))
    cases = [(q.name, int(q), torch.from_numpy(_blocks(q, seed=3)), x) for q in TYPES]
    torch.save(cases, tmp_path / "cases.pt")
    env = {**os.environ, PORTABLE_VARIABLE: "1"}
    done = subprocess.run(
        [sys.executable, "-c", _PORTABLE_RUN, str(tmp_path / "cases.pt")],
        capture_output=True, text=True, env=env, check=True, timeout=900,
    )  # fmt: skip
    portable = json.loads(done.stdout)
    for name, qtype, blocks, x in cases:
        here = torch.ops.codedraft_cpu.gguf_q8_linear(x, blocks, qtype).numpy().tobytes().hex()
        assert portable[name] == here, name
    for name in ("Q5_0", "Q8_0", "Q4_K", "Q6_K"):
        assert portable["repacked " + name] == portable[name], name
