"""The CPU weight forms of `--weights`: each computes the same linear map, packing keeps the model's
parameter count, and cache hits and speculation stay exact in every form."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from inference.layers.attention import KERNEL_MAX_TOKENS
from inference.layers.block_linear import Q4_1Linear, Q8_0Linear
from inference.layers.int8_activation_linear import Q4_1Q8Linear, Q8_0Q8Linear
from inference.layers.linear import (
    WEIGHT_FORMATS,
    Float16Linear,
    TransposedLinear,
    concat_linears,
    pack_linears,
)
from inference.layers.paged_kv import AttentionMetadata, KVCache
from inference.loading import ModelLoadError, load_model, resolve_weights
from tests.fixtures.devices import on_cuda
from tests.fixtures.tiny_models import make_tiny_checkpoint
from tests.inference.engine.engine_helpers import (
    assert_cache_hit_and_speculation_exact,
    exactness_runs,
    one_torch_thread,
)

pytestmark = pytest.mark.usefixtures(one_torch_thread.__name__)


def _linear(bias: bool) -> nn.Linear:
    torch.manual_seed(0)
    return nn.Linear(48, 40, bias=bias).requires_grad_(False)


@pytest.mark.parametrize("bias", [False, True])
def test_each_form_computes_the_linear_map(bias: bool) -> None:
    linear = _linear(bias)
    x = torch.randn(5, 48, generator=torch.Generator().manual_seed(1))
    expected = linear(x)
    torch.testing.assert_close(TransposedLinear(linear)(x), expected, rtol=1e-6, atol=1e-6)
    # float16 rounds only the weights (activations and sums stay float32).
    rounded = nn.Linear(48, 40, bias=bias).requires_grad_(False)
    rounded.weight.copy_(linear.weight.half().float())
    if bias:
        rounded.bias.copy_(linear.bias)
    torch.testing.assert_close(Float16Linear(linear)(x), rounded(x), rtol=1e-5, atol=1e-5)


def test_rows_do_not_depend_on_the_other_rows_of_the_call() -> None:
    # What makes a cache hit (fewer rows) equal a miss: only summation order may differ.
    linear = _linear(True)
    x = torch.randn(7, 48, generator=torch.Generator().manual_seed(2))
    for packed in (TransposedLinear(linear), Float16Linear(linear)):
        torch.testing.assert_close(packed(x)[3:4], packed(x[3:4]), rtol=0, atol=1e-6)


def test_concatenated_linears_give_the_outputs_side_by_side() -> None:
    torch.manual_seed(0)
    parts = [nn.Linear(16, n, bias=True).requires_grad_(False) for n in (8, 4, 4)]
    x = torch.randn(3, 16)
    fused = concat_linears(*parts)
    torch.testing.assert_close(fused(x), torch.cat([p(x) for p in parts], dim=-1), rtol=1e-6, atol=1e-6)


def test_packing_replaces_every_linear_and_copies_a_tied_head(tmp_path: Path) -> None:
    directory = make_tiny_checkpoint(tmp_path / "tied", "llama", tie_word_embeddings=True)
    plain = load_model(directory, device="cpu")
    count = plain.model.parameter_count
    for form, module in (("float32", TransposedLinear), ("float16", Float16Linear), ("q4_1", Q8_0Linear)):
        packed = load_model(directory, device="cpu", weights=form)
        assert packed.weights == form
        assert not any(isinstance(m, nn.Linear) for m in packed.model.modules())
        assert isinstance(packed.model.lm_head, module)
        assert packed.model.parameter_count == count
    # Float weights: the projections in 4 bits, the output projection in 8 (neither holds them exactly).
    assert isinstance(packed.model.model.layers[0].mlp.down_proj, Q4_1Linear)
    # 8-bit activations: the same blocks repacked, Q4_1 and Q8_0 (the output projection).
    int8 = load_model(directory, device="cpu", weights="q4_1_q8").model
    assert isinstance(int8.lm_head, Q8_0Q8Linear)
    assert isinstance(int8.model.layers[0].mlp.down_proj, Q4_1Q8Linear)
    assert int8.parameter_count == count


def test_unknown_forms_and_quantized_forms_off_the_cpu_are_refused() -> None:
    cpu = torch.device("cpu")
    assert resolve_weights("auto", cpu, torch.float32) in WEIGHT_FORMATS
    assert resolve_weights("auto", cpu, torch.bfloat16) is None
    with pytest.raises(ModelLoadError, match="unknown weights 'int8'"):
        resolve_weights("int8", cpu, torch.float32)
    with pytest.raises(ModelLoadError, match="weights float16 need the CPU and float32"):
        resolve_weights("float16", torch.device("cuda"), torch.float32)
    with pytest.raises(ValueError, match="unknown weights format"):
        pack_linears(nn.Sequential(), "int4")


@pytest.mark.parametrize(
    ("arch", "weights", "device"),
    [
        ("llama", "float32", "cpu"),
        ("llama", "float16", "cpu"),
        ("qwen3", "float16", "cpu"),
        ("llama", "q4_1", "cpu"),
        ("qwen3", "q4_1", "cpu"),
        ("llama", "q4_1_q8", "cpu"),
        ("qwen3", "q4_1_q8", "cpu"),
        ("llama", "q8_0", "cpu"),
        ("qwen3", "q8_0", "cpu"),
        # On a GPU: the checkpoint's layout in bfloat16 (what `auto` serves there) and float32's.
        on_cuda("llama", "auto", "cuda"),
        on_cuda("qwen3", "auto", "cuda"),
        on_cuda("llama", "float32", "cuda"),
    ],
)
def test_cache_hit_and_speculation_are_exact_in_each_form(
    arch: str, weights: str, device: str, tmp_path: Path
) -> None:
    # llama: q and k rotated together out of the fused projection; qwen3: q/k norms first.
    make_tiny_checkpoint(tmp_path / arch, arch, tie_word_embeddings=True)
    dtype = torch.float32 if weights == "float32" else None
    model = load_model(tmp_path / arch, device=device, dtype=dtype, weights=weights)
    assert_cache_hit_and_speculation_exact(model)


@pytest.mark.parametrize("weights", ["q4_1", "q4_1_q8"])
def test_the_fused_decode_step_equals_the_layer_modules(weights: str, tmp_path: Path) -> None:
    make_tiny_checkpoint(tmp_path / "llama", "llama", tie_word_embeddings=True)
    model = load_model(tmp_path / "llama", device="cpu", weights=weights).model
    layers = list(model.model.layers)
    assert all(layer.fused is not None for layer in layers)
    config = model.config
    kv = KVCache.allocate(config, 4, 4, torch.float32, "cpu")
    for cache in (*kv.k, *kv.v):
        cache.normal_(generator=torch.Generator().manual_seed(4))
    meta = AttentionMetadata(torch.tensor([9, 10]), torch.tensor([3, 0, 2]), 11, 4)
    hidden = torch.randn(2, config.hidden_size, generator=torch.Generator().manual_seed(5))
    cos, sin = model.rotary(torch.tensor([9, 10]))
    layer, k, v = layers[1], kv.k[1].clone(), kv.v[1].clone()
    fused = layer(hidden, cos, sin, kv.k[1], kv.v[1], meta)
    layer.fused = None
    plain = layer(hidden, cos, sin, k, v, meta)
    torch.testing.assert_close(fused, plain, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close((kv.k[1], kv.v[1]), (k, v), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("weights", ["q4_1", "q4_1_q8"])
def test_layers_with_q_k_norms_keep_their_modules(weights: str, tmp_path: Path) -> None:
    make_tiny_checkpoint(tmp_path / "qwen3", "qwen3", tie_word_embeddings=True)
    model = load_model(tmp_path / "qwen3", device="cpu", weights=weights).model
    assert all(layer.fused is None for layer in model.model.layers)


def test_with_8_bit_activations_every_logit_is_bit_identical_however_it_was_batched(tmp_path: Path) -> None:
    # q4_1_q8 rounds activations to 8 bits: a last-bit difference anywhere could move a code, so a
    # prompt's rows, a cache hit's single row and a verification's rows must all equal plain decoding's.
    make_tiny_checkpoint(tmp_path / "llama", "llama", tie_word_embeddings=True)
    model = load_model(tmp_path / "llama", device="cpu", weights="q4_1_q8")
    runs = exactness_runs(model)
    assert len(runs.prompt_ids) > KERNEL_MAX_TOKENS
    cold, hit, spec = runs.cold, runs.hit, runs.spec
    assert spec.metrics.spec_accepted > 0
    for run in (hit, spec):
        assert run.token_ids == cold.token_ids
        assert all(torch.equal(a, b) for a, b in zip(run.logits, cold.logits, strict=True))


def test_q8_0_holds_the_gguf_quantizers_blocks_and_computes_their_product(tmp_path: Path) -> None:
    from gguf import GGMLQuantizationType
    from gguf.quants import dequantize, quantize

    from inference.layers.gguf_linear import GGUFLinear

    make_tiny_checkpoint(tmp_path / "llama", "llama")
    reference = load_model(tmp_path / "llama", device="cpu")
    model = load_model(tmp_path / "llama", device="cpu", weights="q8_0")
    down = model.model.model.layers[0].mlp.down_proj
    assert isinstance(down, GGUFLinear) and down.matrix.qtype == GGMLQuantizationType.Q8_0
    weight = reference.model.model.layers[0].mlp.down_proj.weight.detach().numpy()
    assert torch.equal(down.blocks, torch.from_numpy(quantize(weight, GGMLQuantizationType.Q8_0)))
    held = torch.from_numpy(dequantize(down.blocks.numpy(), GGMLQuantizationType.Q8_0).reshape(weight.shape))
    x = torch.randn(3, weight.shape[1], generator=torch.Generator().manual_seed(6))
    torch.testing.assert_close(down(x), x @ held.T, rtol=1e-5, atol=1e-5)
