"""GGUF files load with the logits of the same weights from safetensors, and refusals name the problem."""

from __future__ import annotations

import json
from pathlib import Path

import gguf
import numpy as np
import pytest
import torch
from gguf import GGMLQuantizationType as Q

from inference.layers import cpu_kernels
from inference.layers.block_linear import Q4_1Linear, Q8_0Linear
from inference.layers.gguf_linear import GGUFLinear
from inference.loading import LoadedModel, ModelLoadError, load_model
from tests.fixtures.tiny_gguf import with_weights, write_gguf
from tests.fixtures.tiny_models import CHATML_TEMPLATE, corpus_texts, make_tiny_checkpoint, special_token_id
from tests.inference.models.test_models_reference import LONG_PROMPT, paged_logits

SAMPLE_CODE = [
    LONG_PROMPT,
    "def f(x):\n\treturn x ** 2  # 12345 squared\n\n\n",
    "   leading spaces, trailing  \n<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>",
    "naïve café — ünïcødé 😀 and CRLF\r\n",
    corpus_texts()[0][:3000],
]


# A tiny Gemma 3 as llama.cpp would read it: its default query scale (1/sqrt(head_dim)) and local RoPE base.
GEMMA3: dict[str, object] = {
    "sliding_window": 6,
    "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
    "num_hidden_layers": 3,
    "tie_word_embeddings": True,
    "query_pre_attn_scalar": 16,
    "norm_noise": 0.3,
}


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("gguf") / "llama", "llama")


@pytest.fixture(scope="module")
def wide_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Rows of 256 or more values, the block size of the K-quants."""
    return make_tiny_checkpoint(
        tmp_path_factory.mktemp("gguf") / "wide",
        "llama",
        hidden_size=256,
        head_dim=64,
        intermediate_size=512,
        initializer_range=0.05,
    )


def assert_same_model(gguf_model: LoadedModel, reference: LoadedModel) -> None:
    ours, theirs = gguf_model.model.state_dict(), reference.model.state_dict()
    assert ours.keys() == theirs.keys()
    for name in ours:
        assert torch.equal(ours[name], theirs[name]), name
    ids = reference.tokenizer.encode(LONG_PROMPT)
    torch.testing.assert_close(paged_logits(gguf_model, ids), paged_logits(reference, ids), rtol=0, atol=1e-5)


@pytest.mark.parametrize(
    ("arch", "overrides"),
    [
        ("llama", {}),
        ("llama", {"tie_word_embeddings": True}),
        ("qwen2", {}),
        ("qwen3", {}),
        ("mistral", {}),
        ("gemma3_text", GEMMA3),
    ],
)
def test_f32_file_equals_the_safetensors_checkpoint(
    arch: str, overrides: dict[str, object], tmp_path: Path
) -> None:
    checkpoint = make_tiny_checkpoint(tmp_path / arch, arch, **overrides)
    write_gguf(checkpoint, tmp_path / "model.gguf")
    loaded = load_model(tmp_path / "model.gguf", device="cpu")
    reference = load_model(checkpoint, device="cpu")
    assert loaded.config.model_type == arch
    assert loaded.config.tie_word_embeddings == bool(overrides.get("tie_word_embeddings"))
    assert (loaded.name, loaded.path) == ("model", tmp_path / "model.gguf")
    assert_same_model(loaded, reference)


@pytest.mark.parametrize("qtype", [Q.F16, Q.BF16, Q.Q8_0, Q.Q4_0, Q.Q4_1])
def test_quantized_file_equals_its_dequantized_weights(qtype: Q, llama: Path, tmp_path: Path) -> None:
    held = write_gguf(llama, tmp_path / "model.gguf", qtype)
    assert any(not np.array_equal(held[n], v) for n, v in _weights(llama).items())  # really quantized
    reference = load_model(with_weights(llama, held, tmp_path / "reference"), device="cpu")
    assert_same_model(load_model(tmp_path / "model.gguf", device="cpu"), reference)


@pytest.mark.parametrize("qtype", [Q.Q4_K, Q.Q5_K, Q.Q6_K])
def test_k_quant_file_equals_its_dequantized_weights(qtype: Q, wide_llama: Path, tmp_path: Path) -> None:
    held = write_gguf(wide_llama, tmp_path / "model.gguf", qtype)
    reader = gguf.GGUFReader(tmp_path / "model.gguf")
    assert {t.tensor_type for t in reader.tensors} == {qtype, Q.F32}
    reference = load_model(with_weights(wide_llama, held, tmp_path / "reference"), device="cpu")
    assert_same_model(load_model(tmp_path / "model.gguf", device="cpu"), reference)


def test_transformers_reads_the_tiny_file_as_we_do(llama: Path, tmp_path: Path) -> None:
    """transformers' own GGUF loader undoes the q/k permutation independently of ours."""
    pytest.importorskip("accelerate")  # transformers needs it to load GGUF files
    from transformers import AutoModelForCausalLM

    write_gguf(llama, tmp_path / "model.gguf")
    ours = load_model(tmp_path / "model.gguf", device="cpu")
    theirs = AutoModelForCausalLM.from_pretrained(tmp_path, gguf_file="model.gguf", dtype=torch.float32)
    ids = ours.tokenizer.encode(LONG_PROMPT)
    with torch.inference_mode():
        expected = theirs(torch.tensor([ids])).logits[0]
    torch.testing.assert_close(paged_logits(ours, ids), expected, rtol=1e-4, atol=1e-4)


def test_tokenizer_equals_the_folder_tokenizer(llama: Path, tmp_path: Path) -> None:
    write_gguf(llama, tmp_path / "model.gguf")
    ours = load_model(tmp_path / "model.gguf", device="cpu")
    folder = load_model(llama, device="cpu")
    for text in SAMPLE_CODE:
        ids = folder.tokenizer.encode(text)
        assert ours.tokenizer.encode(text) == ids
        assert ours.tokenizer.decode(ids) == folder.tokenizer.decode(ids) == text
    assert ours.tokenizer.special_tokens == folder.tokenizer.special_tokens
    assert ours.tokenizer.eos_token_ids == frozenset({special_token_id("<|endoftext|>")})
    assert ours.chat is not None and ours.chat.source == CHATML_TEMPLATE


def test_end_of_turn_ids_join_the_end_of_sequence_set(llama: Path, tmp_path: Path) -> None:
    im_end = special_token_id("<|im_end|>")
    metadata = {gguf.Keys.Tokenizer.EOT_ID: (im_end, gguf.GGUFValueType.UINT32)}
    write_gguf(llama, tmp_path / "model.gguf", metadata=metadata)
    loaded = load_model(tmp_path / "model.gguf", device="cpu")
    assert loaded.tokenizer.eos_token_ids == frozenset({special_token_id("<|endoftext|>"), im_end})


def _weights(checkpoint: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return load_file(str(checkpoint / "model.safetensors"))


def _refusal(path: Path) -> str:
    with pytest.raises(ModelLoadError) as caught:
        load_model(path, device="cpu")
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_unsupported_architecture_is_named(llama: Path, tmp_path: Path) -> None:
    write_gguf(llama, tmp_path / "model.gguf", architecture="gemma2")
    assert "unsupported GGUF architecture 'gemma2'" in _refusal(tmp_path / "model.gguf")


def test_unsupported_tensor_type_is_named(llama: Path, tmp_path: Path) -> None:
    write_gguf(llama, tmp_path / "model.gguf")
    reader = gguf.GGUFReader(tmp_path / "model.gguf")
    writer = gguf.GGUFWriter(str(tmp_path / "iq.gguf"), "llama")
    for field in reader.fields.values():
        if not field.name.startswith("GGUF.") and field.name != "general.architecture":
            main = field.types[0]
            sub = field.types[-1] if main == gguf.GGUFValueType.ARRAY else None
            writer.add_key_value(field.name, field.contents(), main, sub_type=sub)
    _, block_bytes = gguf.GGML_QUANT_SIZES[Q.IQ2_XXS]
    for tensor in reader.tensors:
        if tensor.name == "blk.0.attn_q.weight":
            # One block per row: the type is refused before any shape is compared.
            raw = np.zeros((tensor.data.shape[0], block_bytes), dtype=np.uint8)
            writer.add_tensor(tensor.name, raw, raw_dtype=Q.IQ2_XXS)
        else:
            writer.add_tensor(tensor.name, np.array(tensor.data))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    message = _refusal(tmp_path / "iq.gguf")
    assert "tensor blk.0.attn_q.weight of iq.gguf has type IQ2_XXS" in message
    assert "Q4_K" in message


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({gguf.Keys.Tokenizer.MODEL: ("bert", gguf.GGUFValueType.STRING)}, "has a 'bert' tokenizer"),
        (
            {gguf.Keys.Tokenizer.PRE: ("no-such-pre", gguf.GGUFValueType.STRING)},
            "pre-tokenizer 'no-such-pre'",
        ),
    ],
)
def test_unsupported_tokenizer_is_named(
    metadata: dict[str, tuple[object, gguf.GGUFValueType]], expected: str, llama: Path, tmp_path: Path
) -> None:
    write_gguf(llama, tmp_path / "model.gguf", metadata=metadata)
    assert expected in _refusal(tmp_path / "model.gguf")


def test_not_a_gguf_file_and_a_missing_file_are_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.gguf").write_bytes(b"not a model at all" * 10)
    assert "cannot read GGUF file" in _refusal(tmp_path / "notes.gguf")
    assert "GGUF file not found" in _refusal(tmp_path / "missing.gguf")


def test_a_file_too_big_for_memory_is_refused_before_loading(llama: Path, tmp_path: Path) -> None:
    write_gguf(llama, tmp_path / "model.gguf")
    with pytest.raises(ModelLoadError, match="does not fit"):
        load_model(tmp_path / "model.gguf", device="cpu", memory_limit_bytes=10_000)


def test_metadata_and_config_agree(llama: Path, tmp_path: Path) -> None:
    write_gguf(llama, tmp_path / "model.gguf")
    loaded = load_model(tmp_path / "model.gguf", device="cpu")
    config = json.loads((llama / "config.json").read_text(encoding="utf-8"))
    assert loaded.config.num_layers == config["num_hidden_layers"]
    assert loaded.config.num_kv_heads == config["num_key_value_heads"]
    assert loaded.config.max_position_embeddings == config["max_position_embeddings"]
    assert loaded.config.rms_norm_eps == pytest.approx(config["rms_norm_eps"])


@pytest.mark.parametrize(("qtype", "form"), [(Q.Q4_1, Q4_1Linear), (Q.Q8_0, Q8_0Linear)])
def test_a_block_quantized_file_is_served_in_its_own_blocks_by_q4_1(
    qtype: Q, form: type, llama: Path, tmp_path: Path
) -> None:
    write_gguf(llama, tmp_path / "model.gguf", qtype)
    served = load_model(tmp_path / "model.gguf", device="cpu", weights="q4_1")
    assert served.weights == "q4_1"
    # pack_block_linear takes a form only where it holds the weights exactly: every linear, the
    # output projection included, holds the file's own blocks.
    linears = [m for m in served.model.modules() if isinstance(m, (Q4_1Linear, Q8_0Linear))]
    assert linears and all(isinstance(m, form) for m in linears)
    exact = load_model(tmp_path / "model.gguf", device="cpu", weights="float32")
    ids = exact.tokenizer.encode(LONG_PROMPT)
    torch.testing.assert_close(paged_logits(served, ids), paged_logits(exact, ids), rtol=0, atol=1e-4)


def test_auto_serves_a_q4_1_file_as_q4_1_and_a_q8_0_file_as_native_q8(llama: Path, tmp_path: Path) -> None:
    write_gguf(llama, tmp_path / "q4_1.gguf", Q.Q4_1)
    assert load_model(tmp_path / "q4_1.gguf", device="cpu", weights="auto").weights == "q4_1"
    write_gguf(llama, tmp_path / "q8_0.gguf", Q.Q8_0)
    served = load_model(tmp_path / "q8_0.gguf", device="cpu", weights="auto")
    assert (served.weights, served.block_quantized) == ("native_q8", False)
    linears = [m for m in served.model.modules() if isinstance(m, GGUFLinear)]
    assert linears and all(m.qtype == Q.Q8_0 and m.will_repack for m in linears)
    q8 = load_model(tmp_path / "q8_0.gguf", device="cpu", weights="native_q8")
    ids = q8.tokenizer.encode(LONG_PROMPT)
    assert torch.equal(paged_logits(served, ids), paged_logits(q8, ids))


def test_a_float_file_is_served_in_float16_by_default(llama: Path, tmp_path: Path) -> None:
    write_gguf(llama, tmp_path / "model.gguf", Q.F32)
    served = load_model(tmp_path / "model.gguf", device="cpu", weights="auto")
    assert (served.weights, served.block_quantized) == ("float16", False)


def test_without_a_compiler_auto_serves_float16_and_q4_1_is_refused(
    llama: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_gguf(llama, tmp_path / "model.gguf", Q.Q4_1)
    monkeypatch.setattr(cpu_kernels, "_loaded", None)
    monkeypatch.setenv("CODEDRAFT_KERNEL_CACHE", str(tmp_path / "kernels"))
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    assert load_model(tmp_path / "model.gguf", device="cpu", weights="auto").weights == "float16"
    with pytest.raises(ModelLoadError, match=r"weights q4_1: could not run .*no-such-compiler"):
        load_model(tmp_path / "model.gguf", device="cpu", weights="q4_1")


def test_gemma3_file_refusals_name_the_problem(tmp_path: Path) -> None:
    checkpoint = make_tiny_checkpoint(tmp_path / "gemma", "gemma3_text", **GEMMA3)
    pattern = gguf.Keys.Attention.SLIDING_WINDOW_PATTERN.format(arch="gemma3")
    write_gguf(
        checkpoint, tmp_path / "pattern.gguf", metadata={pattern: ([True, False], gguf.GGUFValueType.ARRAY)}
    )
    assert "sliding-window layer pattern of 2 entries for 3 layers" in _refusal(tmp_path / "pattern.gguf")
    cap = gguf.Keys.LLM.FINAL_LOGIT_SOFTCAPPING.format(arch="gemma3")
    write_gguf(checkpoint, tmp_path / "cap.gguf", metadata={cap: (30.0, gguf.GGUFValueType.FLOAT32)})
    assert "final_logit_softcapping=30.0 is not supported" in _refusal(tmp_path / "cap.gguf")
    write_gguf(checkpoint, tmp_path / "norm.gguf", drop=("model.layers.1.post_feedforward_layernorm.weight",))
    assert "lacks weight model.layers.1.post_feedforward_layernorm.weight" in _refusal(tmp_path / "norm.gguf")
