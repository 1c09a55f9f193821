"""The q4_1_q8 product (`kernels/int8_products.h`): against the same arithmetic in torch (x quantized
per block of 32 to int8, exact integer code products, float scaling), a row's output bit-identical
whatever the other rows of its call, and the repacked layout against its rule."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from inference.layers.block_linear import Q4_1Linear, Q8_0Linear, q4_1_codes
from inference.layers.cpu_kernels import load_cpu_kernels
from inference.layers.int8_activation_linear import Q4_1Q8Linear, Q8_0Q8Linear, groups
from tests.inference.engine.engine_helpers import one_torch_thread

pytestmark = pytest.mark.usefixtures(one_torch_thread.__name__)


@pytest.fixture(scope="module", autouse=True)
def kernels() -> None:
    load_cpu_kernels()


def _quantized(columns: int, rows: int = 40, bias: bool = True) -> tuple[nn.Linear, Q4_1Linear]:
    torch.manual_seed(columns)
    linear = nn.Linear(columns, rows, bias=bias).requires_grad_(False)
    return linear, Q4_1Linear(linear)


def _quantize_x(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """x per block of 32 as Q8_1: codes (T, blocks, 32) and dx (T, blocks), float32 as the kernel."""
    xb = x.reshape(x.shape[0], x.shape[1] // 32, 32)
    dx = xb.abs().amax(-1) / 127
    inverse = torch.where(dx != 0, 1 / torch.where(dx != 0, dx, 1), 0)
    return (xb * inverse[..., None]).round(), dx  # ties to even, as the kernel's nearbyint


def _reference(x: torch.Tensor, q4: Q4_1Linear) -> torch.Tensor:
    """y = sum over blocks of d_w dx (q_w . q_x) + m_w s, in float64 from float32 dx, s (as Q8_1)."""
    qx, dx = _quantize_x(x)
    s = dx * qx.sum(-1)
    products = torch.einsum("tbe,nbe->tnb", qx.double(), q4_1_codes(q4.codes, qx.shape[1]).double())
    scaled = products * (q4.scales.double()[None] * dx.double()[:, None])
    return (scaled + q4.minimums.double()[None] * s.double()[:, None]).sum(-1)


def _reference_q8_0(x: torch.Tensor, q8: Q8_0Linear) -> torch.Tensor:
    """y = sum over blocks of d_w dx (q_w . q_x), signed codes both, in float64."""
    qx, dx = _quantize_x(x)
    codes = q8.codes.view(torch.int8).reshape(q8.out_features, qx.shape[1], 32).double()
    products = torch.einsum("tbe,nbe->tnb", qx.double(), codes)
    return (products * (q8.scales.double()[None] * dx.double()[:, None])).sum(-1)


# Widths of 1..15 blocks and SmolLM2's 18 and 48: every mix of groups of 8, 4, 2 and 1 blocks.
@pytest.mark.parametrize("columns", [32 * b for b in (1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 15, 18, 48)])
def test_products_equal_integer_code_products_scaled_in_float(columns: int) -> None:
    linear, q4 = _quantized(columns)
    x = torch.randn(20, columns, generator=torch.Generator().manual_seed(1)) * 3
    out = Q4_1Q8Linear(q4)(x) - linear.bias
    expected = _reference(x, q4)
    torch.testing.assert_close(out.double(), expected, rtol=0, atol=2e-6 * expected.abs().max().item())
    # 8-bit activations: within a few hundredths of the dequantized weights' float product.
    exact_x = x @ q4.dequantized().T
    assert (out - exact_x).abs().max() < 0.02 * exact_x.abs().max()


@pytest.mark.parametrize("columns", [32 * b for b in (1, 3, 7, 15, 18, 48)])
def test_q8_0_products_equal_signed_integer_code_products_scaled_in_float(columns: int) -> None:
    # Q8_0 x Q8_0 (the output projection): the weights' signed codes against x's.
    linear, _ = _quantized(columns)
    q8 = Q8_0Linear(linear)
    x = torch.randn(20, columns, generator=torch.Generator().manual_seed(3)) * 3
    out = Q8_0Q8Linear(q8)(x) - linear.bias
    expected = _reference_q8_0(x, q8)
    torch.testing.assert_close(out.double(), expected, rtol=0, atol=2e-6 * expected.abs().max().item())


@pytest.mark.parametrize("form", ["q4_1", "q8_0"])
@pytest.mark.parametrize("columns", [576, 1536, 32 * 13])
def test_a_row_is_bit_identical_whatever_the_other_rows_of_its_call(form: str, columns: int) -> None:
    linear, q4 = _quantized(columns, rows=300)
    packed = Q4_1Q8Linear(q4) if form == "q4_1" else Q8_0Q8Linear(Q8_0Linear(linear))
    x = torch.randn(40, columns, generator=torch.Generator().manual_seed(2))
    alone = packed(x[5:6])
    assert torch.equal(packed(x[2:6])[3:], alone)  # with 3 others
    assert torch.equal(packed(x[:16])[5:6], alone)  # with 15 others
    assert torch.equal(packed(x)[5:6], alone)  # a prompt's many rows
    for rows in range(1, 17):  # every row count of a decode step or a verification
        batch = torch.cat([x[5:6], x[20 : 20 + rows - 1]])
        assert torch.equal(packed(batch)[:1], alone), rows


def test_zero_and_constant_rows_quantize_without_dividing_by_zero() -> None:
    _, q4 = _quantized(96, bias=False)
    x = torch.zeros(3, 96)
    x[1] = 0.5
    x[2, 40] = -2.0
    out = Q4_1Q8Linear(q4)(x)
    assert torch.equal(out[0], torch.zeros(40))
    torch.testing.assert_close(out[1:].double(), _reference(x[1:], q4), rtol=0, atol=1e-5)


def test_the_repacked_layout_follows_the_group_rule() -> None:
    assert groups(18) == [(8, 0), (8, 8), (2, 16)]
    assert groups(15) == [(8, 0), (4, 8), (2, 12), (1, 14)]
    _, q4 = _quantized(32 * 15)
    packed = Q4_1Q8Linear(q4)
    assert packed.codes.shape == (40, 128 + 64 + 32 + 32)  # a lone block's high nibbles stay 0
    assert packed.scales.shape == packed.minimums.shape == (40, 4 * 8)
    # The group of 2 blocks (12, 13): 4 lanes each, the minimum only in each block's first lane.
    assert torch.equal(packed.scales[:, 16:24], q4.scales[:, [12] * 4 + [13] * 4])
    zero = torch.zeros(40, dtype=torch.float16)
    expected = [q4.minimums[:, 12], zero, zero, zero, q4.minimums[:, 13], zero, zero, zero]
    assert torch.equal(packed.minimums[:, 16:24], torch.stack(expected, 1))


def test_bad_shapes_are_refused_with_a_reason() -> None:
    _, q4 = _quantized(128)
    packed = Q4_1Q8Linear(q4)
    with pytest.raises(RuntimeError, match="do not take an input of width 96"):
        torch.ops.codedraft_cpu.q4_1_q8_linear(
            torch.randn(1, 96), packed.codes, packed.scales, packed.minimums, 0
        )
    with pytest.raises(RuntimeError, match="float32"):
        packed(torch.randn(1, 128, dtype=torch.float64))
