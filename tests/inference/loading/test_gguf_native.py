"""The native weights form: a GGUF file's matrices served in their own blocks from the memory-mapped
file, with float32's outputs on the file's exact weights, every engine exactness promise kept, and
damaged files refused at load with the tensor named."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
import pytest
import torch
from gguf import GGMLQuantizationType as Q

from inference.config import SamplingParams, SpecMode
from inference.engine.sequence import Request
from inference.layers import gguf_linear
from inference.layers.gguf_linear import (
    KERNEL_TYPES,
    REPACKED_TYPES,
    ConcatenatedLinear,
    GGUFEmbedding,
    GGUFLinear,
)
from inference.layers.linear import Float16Linear, TransposedLinear
from inference.layers.paged_kv import AttentionMetadata, KVCache
from inference.loading import LoadedModel, ModelLoadError, load_model
from tests.fixtures.tiny_gguf import write_gguf
from tests.fixtures.tiny_models import make_tiny_checkpoint
from tests.inference.engine.engine_helpers import (
    PROMPTS,
    assert_cache_hit_and_speculation_exact,
    make_engine,
    one_torch_thread,
    run_all,
    tiny_k_quant_model,
)
from tests.inference.loading.test_gguf_loading import GEMMA3
from tests.inference.models.test_models_reference import LONG_PROMPT, paged_logits

pytestmark = pytest.mark.usefixtures(one_torch_thread.__name__)

K_QUANTS = (Q.Q4_K, Q.Q5_K, Q.Q6_K)
# llama.cpp's Q4_K_M: Q4_K, with v and down projections (some layers) in Q6_K, the embeddings in
# a legacy type where rows are not whole K blocks.
Q4_K_M = {".v_proj.": Q.Q6_K, "layers.1.mlp.down_proj": Q.Q6_K, "embed_tokens": Q.Q8_0}


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("native") / "llama", "llama")


@pytest.fixture(scope="module")
def wide_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Rows of 256 or more values, the block size of the K-quants; tied output head."""
    return make_tiny_checkpoint(
        tmp_path_factory.mktemp("native") / "wide",
        "llama",
        hidden_size=256,
        head_dim=64,
        intermediate_size=512,
        initializer_range=0.05,
        tie_word_embeddings=True,
    )


def assert_float32s_logits(served: LoadedModel, path: Path) -> None:
    """`served` gives the logits of the float32 form of the file at `path` up to float32 rounding:
    random K-quant blocks make activations large, so the bound scales with the logits."""
    exact = load_model(path, device="cpu", weights="float32")
    ids = exact.tokenizer.encode(LONG_PROMPT)
    expected = paged_logits(exact, ids)
    bound = 5e-5 * float(expected.abs().max())
    torch.testing.assert_close(paged_logits(served, ids), expected, rtol=1e-5, atol=bound)
    assert torch.equal(paged_logits(served, ids).argmax(-1), expected.argmax(-1))


def _checkpoint(qtype: Q, llama: Path, wide_llama: Path) -> Path:
    return wide_llama if qtype in K_QUANTS else llama


@pytest.mark.parametrize("qtype", sorted(KERNEL_TYPES - {Q.Q4_1}), ids=lambda t: t.name)
def test_each_block_type_is_served_in_its_blocks_with_float32s_logits(
    qtype: Q, llama: Path, wide_llama: Path, tmp_path: Path
) -> None:
    write_gguf(_checkpoint(qtype, llama, wide_llama), tmp_path / "model.gguf", qtype)
    # Only a file with Q4_1 matrices keeps the q4_1 form by default; one all in Q8_0 is native_q8 too.
    assert load_model(tmp_path / "model.gguf", device="cpu", weights="auto").weights == "native_q8"
    served = load_model(tmp_path / "model.gguf", device="cpu", weights="native")
    modules = list(served.model.modules())
    assert not any(isinstance(m, (torch.nn.Linear, TransposedLinear, Float16Linear)) for m in modules)
    assert isinstance(served.model.model.embed_tokens, GGUFEmbedding)
    assert {m.matrix.qtype for m in modules if isinstance(m, GGUFLinear)} == {qtype}
    assert_float32s_logits(served, tmp_path / "model.gguf")


def test_a_q4_1_file_keeps_the_q4_1_form_by_default_and_may_be_served_native(
    llama: Path, tmp_path: Path
) -> None:
    write_gguf(llama, tmp_path / "model.gguf", Q.Q4_1)
    assert load_model(tmp_path / "model.gguf", device="cpu", weights="auto").weights == "q4_1"
    assert_float32s_logits(
        load_model(tmp_path / "model.gguf", device="cpu", weights="native"), tmp_path / "model.gguf"
    )


def test_a_file_mixing_types_as_q4_k_m_does(wide_llama: Path, tmp_path: Path) -> None:
    write_gguf(wide_llama, tmp_path / "model.gguf", Q.Q4_K, types=Q4_K_M)
    served = load_model(tmp_path / "model.gguf", device="cpu", weights="native")
    layer0, layer1 = served.model.model.layers[0], served.model.model.layers[1]
    qkv = layer0.self_attn.qkv_proj
    assert isinstance(qkv, ConcatenatedLinear)
    assert [part.matrix.qtype for part in qkv.parts] == [Q.Q4_K, Q.Q4_K, Q.Q6_K]
    assert (layer0.mlp.down_proj.matrix.qtype, layer1.mlp.down_proj.matrix.qtype) == (Q.Q4_K, Q.Q6_K)
    # The tied output head reads the embeddings' own blocks.
    assert served.model.lm_head.matrix is served.model.model.embed_tokens.matrix
    assert_float32s_logits(served, tmp_path / "model.gguf")


@pytest.mark.parametrize("form", ["native", "native_q8"])
@pytest.mark.parametrize("mix", [{}, Q4_K_M], ids=["Q4_K", "Q4_K_M"])
def test_cache_hit_and_speculation_are_exact_on_a_k_quant_file(
    mix: dict[str, Q], form: str, wide_llama: Path, tmp_path: Path
) -> None:
    write_gguf(wide_llama, tmp_path / "model.gguf", Q.Q4_K, types=mix)
    assert_cache_hit_and_speculation_exact(load_model(tmp_path / "model.gguf", device="cpu", weights=form))


def _repacked_and_in_place(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[LoadedModel, LoadedModel]:
    """`path` served native_q8 twice: repacked (the thread joined), and with nothing repacked."""
    repacked = load_model(path, device="cpu", weights="native_q8")
    assert repacked.model.repacking is not None
    repacked.model.repacking.join()
    with monkeypatch.context() as patch:
        patch.setattr(gguf_linear, "REPACKED_TYPES", frozenset())
        in_place = load_model(path, device="cpu", weights="native_q8")
    assert in_place.model.repacking is None
    return repacked, in_place


def test_repacked_blocks_give_the_logits_of_the_files_blocks_bit_for_bit(
    wide_llama: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """native_q8 on a file mixing types as Q4_K_M does, its Q4_K and Q6_K matrices repacked (the
    tied head too, in Q6_K, its embedding reading the repacked bytes), against the same file read in
    place: the same logits to the bit, and the same greedy tokens."""
    write_gguf(wide_llama, tmp_path / "model.gguf", Q.Q4_K, types={**Q4_K_M, "embed_tokens": Q.Q6_K})
    repacked, in_place = _repacked_and_in_place(tmp_path / "model.gguf", monkeypatch)
    linears = [m for m in repacked.model.modules() if isinstance(m, GGUFLinear)]
    assert {m.matrix.qtype for m in linears if m.repacked} == {Q.Q4_K, Q.Q6_K}
    assert repacked.model.lm_head.repacked
    assert isinstance(repacked.model.model.embed_tokens, GGUFEmbedding)
    ids = repacked.tokenizer.encode(LONG_PROMPT)
    assert torch.equal(paged_logits(repacked, ids), paged_logits(in_place, ids))


def test_a_gemma_file_with_a_tied_q8_0_head_and_q5_0_layers_repacks_to_the_same_logits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gemma 3 270M's layout in small: Q5_0 layers, Q4_K and Q6_K here and there, a tied Q8_0 head
    that is also the embedding table. Repacked (only the repacked bytes kept), the logits are those of
    the file's blocks read in place to the bit, and the embedding rows read from the repacked head are
    gguf's dequantization of the file's."""
    checkpoint = make_tiny_checkpoint(
        tmp_path / "gemma", "gemma3_text", hidden_size=256, head_dim=64, intermediate_size=512, **GEMMA3
    )
    gemma_mix = {".v_proj.": Q.Q6_K, "layers.1.mlp.down_proj": Q.Q4_K, "embed_tokens": Q.Q8_0}
    write_gguf(checkpoint, tmp_path / "model.gguf", Q.Q5_0, types=gemma_mix)
    repacked, in_place = _repacked_and_in_place(tmp_path / "model.gguf", monkeypatch)
    linears = [m for m in repacked.model.modules() if isinstance(m, GGUFLinear)]
    assert {m.matrix.qtype for m in linears if m.repacked} == {Q.Q5_0, Q.Q4_K, Q.Q6_K, Q.Q8_0}
    assert all(m.repacked for m in linears)
    head = repacked.model.lm_head
    assert head.repacked and head.blocks.dim() == 1 and head._file_matrix is None
    embeddings = repacked.model.model.embed_tokens
    assert isinstance(embeddings, GGUFEmbedding) and embeddings.matrix is head
    file_table = in_place.model.model.embed_tokens.matrix
    ids = torch.tensor([[0, 5, head.out_features - 1], [3, 3, 17]])
    assert torch.equal(embeddings(ids), file_table.rows(ids))
    expected = gguf.quants.dequantize(file_table.blocks.numpy(), Q.Q8_0).reshape(file_table.shape)
    assert torch.equal(embeddings(ids), torch.from_numpy(expected)[ids])
    prompt = repacked.tokenizer.encode(LONG_PROMPT)
    assert torch.equal(paged_logits(repacked, prompt), paged_logits(in_place, prompt))


def _mapped_ranges(path: Path) -> list[tuple[int, int]]:
    """The address ranges where this process maps `path` (Linux's /proc/self/maps)."""
    ranges = []
    for line in Path("/proc/self/maps").read_text().splitlines():
        if line.endswith(str(path)):
            low, high = line.split()[0].split("-")
            ranges.append((int(low, 16), int(high, 16)))
    return ranges


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux's /proc/self/maps")
def test_matrices_stay_in_the_mapped_file(wide_llama: Path, tmp_path: Path) -> None:
    """Nothing copied but the permuted q/k rows and the Q4_K and Q6_K matrices, which 8-bit activations
    read repacked (only the repacked bytes kept): every other matrix's blocks lie in the file's
    mapping."""
    write_gguf(wide_llama, tmp_path / "model.gguf", Q.Q4_K, types=Q4_K_M)
    served = load_model(tmp_path / "model.gguf", device="cpu", weights="auto")
    assert served.model.repacking is not None
    served.model.repacking.join()
    ranges = _mapped_ranges(tmp_path / "model.gguf")
    layer = served.model.model.layers[0]
    q, k, v = layer.self_attn.qkv_proj.parts
    kept = [
        v,
        layer.self_attn.o_proj,
        *layer.mlp.gate_up_proj.parts,
        layer.mlp.down_proj,
        served.model.lm_head,
    ]
    for linear in (*kept, q, k):
        start = linear.blocks.data_ptr()
        inside = any(low <= start and start + linear.blocks.numel() <= high for low, high in ranges)
        assert inside == (linear not in (q, k) and not linear.repacked)
        assert linear.repacked == (linear.matrix.qtype in REPACKED_TYPES)


def test_a_type_without_a_kernel_is_named_and_served_exactly(
    wide_llama: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_gguf(
        wide_llama, tmp_path / "model.gguf", Q.Q4_K, types={".o_proj.": Q.F32, "layers.0.mlp.up": Q.F16}
    )
    with caplog.at_level("WARNING"):
        served = load_model(tmp_path / "model.gguf", device="cpu", weights="auto")
    assert served.weights == "native_q8"
    o_proj = served.model.model.layers[0].self_attn.o_proj
    assert isinstance(o_proj, TransposedLinear)
    up = served.model.model.layers[0].mlp.gate_up_proj.parts[1]
    assert isinstance(up, Float16Linear)  # F16 in the file: float16 holds it exactly
    assert "no kernel" not in caplog.text  # float tensors are no quantization to name


def test_a_quantization_without_a_kernel_is_named_and_served_dequantized(
    wide_llama: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_gguf(wide_llama, tmp_path / "model.gguf", Q.Q4_K, types={"layers.1.mlp.up": Q.Q3_K})
    with caplog.at_level("WARNING"):
        served = load_model(tmp_path / "model.gguf", device="cpu", weights="native")
    assert served.weights == "native"
    assert "tensor blk.1.ffn_up.weight is Q3_K, which has no kernel: served dequantized" in caplog.text
    up = served.model.model.layers[1].mlp.gate_up_proj.parts[1]
    assert isinstance(up, TransposedLinear)
    assert_float32s_logits(served, tmp_path / "model.gguf")


def test_native_is_refused_for_a_checkpoint_without_blocks(llama: Path, tmp_path: Path) -> None:
    write_gguf(llama, tmp_path / "model.gguf", Q.F32)
    with pytest.raises(ModelLoadError, match="weights native serve a GGUF file's own quantized blocks"):
        load_model(tmp_path / "model.gguf", device="cpu", weights="native")
    with pytest.raises(ModelLoadError, match="weights native serve"):
        load_model(llama, device="cpu", weights="native")


def _refusal(path: Path) -> str:
    with pytest.raises(ModelLoadError) as caught:
        load_model(path, device="cpu", weights="auto")
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_truncated_file_is_refused_naming_the_tensor(wide_llama: Path, tmp_path: Path) -> None:
    write_gguf(wide_llama, tmp_path / "model.gguf", Q.Q4_K)
    data = (tmp_path / "model.gguf").read_bytes()
    cut = len(data) - 5000
    (tmp_path / "cut.gguf").write_bytes(data[:cut])
    tensors = sorted(gguf.GGUFReader(tmp_path / "model.gguf").tensors, key=lambda t: t.data_offset)
    first_cut = next(t for t in tensors if t.data_offset + t.n_bytes > cut)
    assert f"tensor {first_cut.name} is truncated" in _refusal(tmp_path / "cut.gguf")


def test_a_corrupt_block_is_refused_naming_the_tensor(wide_llama: Path, tmp_path: Path) -> None:
    write_gguf(wide_llama, tmp_path / "model.gguf", Q.Q6_K)
    reader = gguf.GGUFReader(tmp_path / "model.gguf")
    tensor = next(t for t in reader.tensors if t.name == "blk.1.ffn_up.weight")
    data = bytearray((tmp_path / "model.gguf").read_bytes())
    # The second block's scale d (the last two bytes of a 210-byte Q6_K block): float16 infinity.
    at = tensor.data_offset + 210 + 208
    data[at : at + 2] = np.array([np.inf], dtype=np.float16).tobytes()
    (tmp_path / "bad.gguf").write_bytes(bytes(data))
    message = _refusal(tmp_path / "bad.gguf")
    assert "tensor blk.1.ffn_up.weight of bad.gguf is corrupt: a Q6_K block has a non-finite scale" in message


def _retyped(source: Path, out: Path, name: str, type_number: int, row: int | None = None) -> Path:
    """`source` with tensor `name`'s type number (and row length) rewritten in its header."""
    reader = gguf.GGUFReader(source)
    tensor = next(t for t in reader.tensors if t.name == name)
    parts = tensor.field.parts
    data = bytearray(source.read_bytes())
    base = reader.data.ctypes.data
    type_at = parts[4].ctypes.data - base
    data[type_at : type_at + 4] = np.array([type_number], dtype=np.uint32).tobytes()
    if row is not None:
        dims_at = parts[3].ctypes.data - base
        data[dims_at : dims_at + 8] = np.array([row], dtype=np.uint64).tobytes()
    out.write_bytes(bytes(data))
    return out


def test_an_unknown_type_and_a_row_the_type_cannot_hold_are_refused_naming_the_tensor(
    llama: Path, tmp_path: Path
) -> None:
    write_gguf(llama, tmp_path / "model.gguf", Q.Q4_0)
    unknown = _retyped(tmp_path / "model.gguf", tmp_path / "unknown.gguf", "blk.0.attn_q.weight", 99)
    assert "tensor blk.0.attn_q.weight has type number 99, which no GGUF reader knows" in _refusal(unknown)
    # Rows of 48 weights claimed for Q4_0's blocks of 32.
    odd = _retyped(tmp_path / "model.gguf", tmp_path / "odd.gguf", "blk.0.ffn_up.weight", int(Q.Q4_0), row=48)
    assert "tensor blk.0.ffn_up.weight: rows of 48 weights do not split into Q4_0 blocks of 32" in _refusal(
        odd
    )


@pytest.mark.parametrize("form", ["native", "native_q8"])
def test_several_sessions_at_once_equal_each_alone(form: str, tmp_path: Path) -> None:
    """Batched decoding (the few-row kernels over several sequences' rows, prompt lookup on) gives each
    session the tokens it gets alone."""
    model = tiny_k_quant_model(tmp_path, seed=3, weights=form)

    def request(index: int) -> Request:
        ids = model.tokenizer.encode(PROMPTS[index])
        sampling = SamplingParams(max_tokens=16, ignore_eos=True)
        return Request(f"r{index}", prompt_token_ids=ids, sampling=sampling, spec_mode=SpecMode.NGRAM)

    together = run_all(make_engine(model), [request(i) for i in range(3)])
    for index in range(3):
        alone = run_all(make_engine(model), [request(index)])[f"r{index}"]
        assert together[f"r{index}"].token_ids == alone.token_ids


def test_without_a_compiler_auto_serves_float16_and_native_is_refused(
    wide_llama: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inference.layers import cpu_kernels

    write_gguf(wide_llama, tmp_path / "model.gguf", Q.Q4_K)
    monkeypatch.setattr(cpu_kernels, "_loaded", None)
    monkeypatch.setenv("CODEDRAFT_KERNEL_CACHE", str(tmp_path / "kernels"))
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    assert load_model(tmp_path / "model.gguf", device="cpu", weights="auto").weights == "float16"
    with pytest.raises(ModelLoadError, match=r"weights native: could not run .*no-such-compiler"):
        load_model(tmp_path / "model.gguf", device="cpu", weights="native")


def _hidden(loaded: LoadedModel, ids: list[int], rows: torch.Tensor | None) -> tuple[torch.Tensor, KVCache]:
    """Final hidden states of `ids` in one pass (only `rows` with rows), and the KV pool it wrote."""
    n_blocks = (len(ids) + 3) // 4
    kv = KVCache.allocate(loaded.config, n_blocks, 4, torch.float32, "cpu")
    table, pos = torch.arange(n_blocks), torch.arange(len(ids))
    meta = AttentionMetadata(table[pos // 4] * 4 + pos % 4, table, len(ids), 4)
    with torch.inference_mode():
        return loaded.model.hidden_states(torch.tensor(ids), pos, kv, meta, None, rows), kv


@pytest.mark.parametrize("layout", ["llama", "gemma3_text"])
@pytest.mark.parametrize("weights", ["native_q8", "native"])
def test_a_pass_for_some_rows_gives_those_rows_bit_for_bit_and_writes_every_rows_kv(
    wide_llama: Path, tmp_path: Path, weights: str, layout: str
) -> None:
    """A pass asked for some rows (a prompt's last row): those rows' hidden states are the whole pass's
    to the bit, and the KV pool is the same; native_q8, whose rows do not depend on each other, computes
    only them in the last layer past its attention, native picks them at the end. Llama's layout as
    Q4_K_M, and Gemma 3's (sandwich and q/k norms, sliding windows) in Q5_0."""
    if layout == "llama":
        write_gguf(wide_llama, tmp_path / "model.gguf", Q.Q4_K, types=Q4_K_M)
    else:
        checkpoint = make_tiny_checkpoint(
            tmp_path / "gemma", "gemma3_text", hidden_size=256, head_dim=64, intermediate_size=512, **GEMMA3
        )
        write_gguf(checkpoint, tmp_path / "model.gguf", Q.Q5_0, types={"embed_tokens": Q.Q8_0})
    loaded = load_model(tmp_path / "model.gguf", device="cpu", weights=weights)
    if loaded.model.repacking is not None:
        loaded.model.repacking.join()
    assert loaded.model.rows_alone == (weights == "native_q8")
    ids = loaded.tokenizer.encode(LONG_PROMPT)
    whole, whole_kv = _hidden(loaded, ids, None)
    for rows in ([len(ids) - 1], [0, 5, len(ids) - 2, len(ids) - 1]):
        some, kv = _hidden(loaded, ids, torch.tensor(rows))
        assert torch.equal(some, whole[rows])
        assert all(torch.equal(a, b) for a, b in zip(kv.k + kv.v, whole_kv.k + whole_kv.v, strict=True))
