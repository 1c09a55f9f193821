"""The kernels of the q4_1 weights form (`inference/layers/kernels/`), against the same
arithmetic in plain torch: the block quantizers, the block products in both of their paths, the
RMS norm, and few-row paged attention with and without the fused rotary and K/V write."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from inference.layers import cpu_kernels
from inference.layers.attention import span_attention
from inference.layers.block_linear import (
    FEW_ROWS,
    Q4_1Linear,
    Q8_0Linear,
    dequantize_q4_1,
    pack_block_linear,
    quantize_q4_1,
)
from inference.layers.cpu_kernels import KernelBuildError, load_cpu_kernels
from inference.layers.paged_kv import SequenceSpan, write_kv
from inference.layers.rotary import apply_rotary
from tests.inference.engine.engine_helpers import one_torch_thread

pytestmark = pytest.mark.usefixtures(one_torch_thread.__name__)


@pytest.fixture(scope="module", autouse=True)
def kernels() -> None:
    load_cpu_kernels()


def _linear(rows: int = 96, columns: int = 128, bias: bool = True, seed: int = 0) -> nn.Linear:
    torch.manual_seed(seed)
    return nn.Linear(columns, rows, bias=bias).requires_grad_(False)


def _with_weight(weight: torch.Tensor) -> nn.Linear:
    linear = nn.Linear(weight.shape[1], weight.shape[0], bias=False).requires_grad_(False)
    linear.weight.copy_(weight)
    return linear


@pytest.mark.parametrize("form", [Q4_1Linear, Q8_0Linear])
@pytest.mark.parametrize("rows", [1, 2, 3, 5, 6, 9, 12, FEW_ROWS, FEW_ROWS + 1, 40])
def test_block_products_equal_the_dequantized_weights_product(form: type, rows: int) -> None:
    # Both paths: up to FEW_ROWS streaming the blocks (in groups of up to 12 rows), beyond them
    # dequantized tiles (300 weight rows = one full tile of 256 and a partial one).
    linear = _linear(rows=300)
    packed = form(linear)
    x = torch.randn(rows, 128, generator=torch.Generator().manual_seed(rows))
    expected = x @ packed.dequantized().T + linear.bias
    torch.testing.assert_close(packed(x), expected, rtol=1e-5, atol=1e-5)
    # A row's output does not depend on the other rows of its call (what keeps a cache hit exact).
    torch.testing.assert_close(packed(x)[-1:], packed(x[-1:]), rtol=1e-5, atol=1e-5)


def test_quantized_weights_are_close_and_quantizing_them_again_gives_them_back() -> None:
    weight = _linear(bias=False).weight
    q4, q8 = Q4_1Linear(_with_weight(weight)), Q8_0Linear(_with_weight(weight))
    blocks = weight.reshape(96, 4, 32)
    q4_step = (blocks.amax(-1) - blocks.amin(-1)) / 15  # one code step per block
    assert ((q4.dequantized() - weight).abs().reshape(96, 4, 32) <= q4_step[..., None] * 0.51).all()
    assert (q8.dequantized() - weight).abs().max() < blocks.abs().max() / 127
    again = quantize_q4_1(q4.dequantized())
    assert all(torch.equal(a, b) for a, b in zip(again, (q4.codes, q4.scales, q4.minimums), strict=True))
    assert torch.equal(Q8_0Linear(_with_weight(q8.dequantized())).dequantized(), q8.dequantized())


def test_each_linear_gets_the_first_block_form_that_holds_it_exactly() -> None:
    weight = _linear(bias=False).weight
    four_bit = Q4_1Linear(_with_weight(weight)).dequantized()
    eight_bit = Q8_0Linear(_with_weight(weight)).dequantized()
    assert isinstance(pack_block_linear(_with_weight(four_bit), output=True), Q4_1Linear)
    assert isinstance(pack_block_linear(_with_weight(eight_bit), output=False), Q8_0Linear)
    assert isinstance(pack_block_linear(_with_weight(weight), output=False), Q4_1Linear)  # lossy
    assert isinstance(pack_block_linear(_with_weight(weight), output=True), Q8_0Linear)


def test_constant_and_zero_blocks_quantize_without_dividing_by_zero() -> None:
    weight = torch.zeros(2, 64)
    weight[1] = 0.25
    packed = Q4_1Linear(_with_weight(weight))
    assert torch.equal(packed.dequantized(), weight)
    assert torch.equal(Q8_0Linear(_with_weight(torch.zeros(2, 64))).dequantized(), torch.zeros(2, 64))
    assert torch.equal(dequantize_q4_1(*quantize_q4_1(weight)), weight)


def test_bad_shapes_are_refused_with_a_reason() -> None:
    packed = Q4_1Linear(_linear())
    with pytest.raises(RuntimeError, match="do not take an input of width 96"):
        torch.ops.codedraft_cpu.q4_1_linear(
            torch.randn(1, 96), packed.codes, packed.scales, packed.minimums, FEW_ROWS
        )
    with pytest.raises(RuntimeError, match="float32"):
        packed(torch.randn(1, 128, dtype=torch.float64))
    with pytest.raises(ValueError, match="not a multiple of 32"):
        Q4_1Linear(nn.Linear(48, 8))


def test_rms_norm_equals_torch() -> None:
    x = torch.randn(5, 3, 64) * 3
    weight = torch.randn(64)
    torch.testing.assert_close(
        torch.ops.codedraft_cpu.rms_norm(x, weight, 1e-5), F.rms_norm(x, (64,), weight, 1e-5)
    )


def _pool(blocks: int = 12, block_size: int = 4, kv_heads: int = 2, head_dim: int = 16):
    generator = torch.Generator().manual_seed(3)
    shape = (kv_heads, blocks, block_size, head_dim)
    return torch.randn(shape, generator=generator), torch.randn(shape, generator=generator)


@pytest.mark.parametrize("table", [[2, 3, 4, 5, 6], [7, 1, 9, 0, 4]])
@pytest.mark.parametrize("rows", [1, 2, 3])
def test_paged_attention_equals_sdpa(table: list[int], rows: int) -> None:
    k_cache, v_cache = _pool()
    span = SequenceSpan(rows, torch.tensor(table), context_len=18)
    q = torch.randn(rows, 6, 16)  # 6 query heads over 2 KV heads
    torch.testing.assert_close(
        span_attention(q, k_cache, v_cache, span, 0.25, kernel=True),
        span_attention(q, k_cache, v_cache, span, 0.25),
        rtol=1e-5,
        atol=1e-5,
    )


@pytest.mark.parametrize("window", [5, 8, 13, 40])
@pytest.mark.parametrize("rows", [1, 3])
def test_paged_attention_in_a_sliding_window_equals_sdpa(window: int, rows: int) -> None:
    k_cache, v_cache = _pool()
    span = SequenceSpan(rows, torch.tensor([7, 1, 9, 0, 4, 2]), context_len=23)
    q = torch.randn(rows, 6, 16, generator=torch.Generator().manual_seed(4))
    torch.testing.assert_close(
        span_attention(q, k_cache, v_cache, span, 0.25, window, kernel=True),
        span_attention(q, k_cache, v_cache, span, 0.25, window),
        rtol=1e-5,
        atol=1e-5,
    )


def test_a_windowed_rows_attention_does_not_depend_on_the_other_rows_of_its_call() -> None:
    # Speculation verifies several rows in one call where plain decoding sends one: the bits must agree.
    k_cache, v_cache = _pool()
    table, q = (
        torch.tensor([7, 1, 9, 0, 4, 2]),
        torch.randn(4, 6, 16, generator=torch.Generator().manual_seed(6)),
    )
    together = torch.ops.codedraft_cpu.paged_attention(q, k_cache, v_cache, table, 23, 0.25, 6)
    for row in range(4):
        alone = torch.ops.codedraft_cpu.paged_attention(
            q[row : row + 1], k_cache, v_cache, table, 20 + row, 0.25, 6
        )
        assert torch.equal(alone[0], together[row])


def test_rotate_store_attend_equals_the_separate_steps() -> None:
    k_cache, v_cache = _pool()
    table, context_len, heads = torch.tensor([5, 2, 8]), 11, 6
    slots = torch.tensor([2 * 4 + 1, 2 * 4 + 2])  # positions 9 and 10 live in block 2 (offsets 1, 2)
    qkv = torch.randn(2, heads + 4, 16)
    angles = torch.randn(2, 8)
    cos, sin = torch.cat((angles, angles), -1).cos(), torch.cat((angles, angles), -1).sin()
    fused_k, fused_v = k_cache.clone(), v_cache.clone()
    out = torch.ops.codedraft_cpu.rotate_store_attend(
        qkv, cos, sin, fused_k, fused_v, slots, table, context_len, heads, 0.25
    )
    rotated = apply_rotary(qkv[:, : heads + 2], cos, sin)
    write_kv(k_cache, v_cache, rotated[:, heads:], qkv[:, heads + 2 :], slots)
    span = SequenceSpan(2, table, context_len)
    expected = span_attention(rotated[:, :heads], k_cache, v_cache, span, 0.25)
    torch.testing.assert_close(fused_k, k_cache, rtol=1e-6, atol=1e-6)
    assert torch.equal(fused_v, v_cache)
    torch.testing.assert_close(out, expected.reshape(2, heads * 16), rtol=1e-5, atol=1e-5)


def test_attention_refuses_blocks_outside_the_pool() -> None:
    k_cache, v_cache = _pool()
    with pytest.raises(RuntimeError, match="block id 12 out of range"):
        torch.ops.codedraft_cpu.paged_attention(
            torch.randn(1, 6, 16), k_cache, v_cache, torch.tensor([12]), 3, 1.0
        )
    with pytest.raises(RuntimeError, match="window must be 0"):
        torch.ops.codedraft_cpu.paged_attention(
            torch.randn(1, 6, 16), k_cache, v_cache, torch.tensor([1]), 3, 1.0, -1
        )
    with pytest.raises(RuntimeError, match="do not cover the context"):
        torch.ops.codedraft_cpu.paged_attention(
            torch.randn(1, 6, 16), k_cache, v_cache, torch.tensor([1]), 9, 1.0
        )


def test_two_threads_split_the_work_and_give_the_same_outputs() -> None:
    # The kernels parallelise over weight rows and query heads with torch's OpenMP pool.
    packed = Q4_1Linear(_linear(rows=300))
    x = torch.randn(3, 128, generator=torch.Generator().manual_seed(5))
    k_cache, v_cache = _pool()
    q, table = torch.randn(2, 6, 16), torch.tensor([3, 1, 4])
    alone = packed(x), torch.ops.codedraft_cpu.paged_attention(q, k_cache, v_cache, table, 10, 0.25)
    torch.set_num_threads(2)
    shared = packed(x), torch.ops.codedraft_cpu.paged_attention(q, k_cache, v_cache, table, 10, 0.25)
    assert all(torch.equal(a, b) for a, b in zip(alone, shared, strict=True))


def test_a_failing_compiler_or_an_unwritable_cache_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cpu_kernels, "_loaded", None)
    monkeypatch.setenv("CODEDRAFT_KERNEL_CACHE", str(tmp_path / "kernels"))
    monkeypatch.setenv("CXX", "false")  # runs, exits 1
    with pytest.raises(KernelBuildError, match=r"compiling kernels/library.cpp failed \(false\)"):
        load_cpu_kernels()
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("CODEDRAFT_KERNEL_CACHE", str(tmp_path / "file" / "kernels"))
    with pytest.raises(KernelBuildError, match="cannot write the kernel cache"):
        load_cpu_kernels()


def test_a_bad_slot_is_refused_before_any_kv_is_written() -> None:
    k_cache, v_cache = _pool()
    before = k_cache.clone(), v_cache.clone()
    qkv, trig = torch.randn(2, 10, 16), torch.ones(2, 16)
    with pytest.raises(RuntimeError, match="slot 999 out of range"):
        torch.ops.codedraft_cpu.rotate_store_attend(
            qkv, trig, trig, k_cache, v_cache, torch.tensor([5, 999]), torch.tensor([1, 2]), 6, 6, 0.25
        )
    assert torch.equal(k_cache, before[0]) and torch.equal(v_cache, before[1])


def test_every_header_the_library_includes_is_part_of_the_build_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A header changed on its own must name a new binary, else an old build would be loaded.
    sources = tmp_path / "kernels"
    sources.mkdir()
    for path in cpu_kernels.SOURCES.iterdir():
        (sources / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(cpu_kernels, "SOURCES", sources)
    included = {
        line.split('"')[1]
        for path in sources.iterdir()
        for line in path.read_text().splitlines()
        if line.startswith('#include "')
    }
    assert "gguf_repacked_tiles.h" in included and included <= {path.name for path in sources.iterdir()}
    before = cpu_kernels._library_path("c++")
    for name in sorted(included):
        header = sources / name
        header.write_text(header.read_text() + "\n")
        after = cpu_kernels._library_path("c++")
        assert after != before, name
        before = after
