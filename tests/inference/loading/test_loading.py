"""Loading model directories: the happy path, sharded weights, and every refusal with its message."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from inference.device import DeviceError, default_dtype, resolve_device
from inference.loading import ModelLoadError, load_model
from inference.loading.hf_folder import estimate_weight_bytes, weight_files
from inference.prompts.chat import ChatTemplate
from tests.fixtures.tiny_models import make_tiny_checkpoint, special_token_id


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("ckpt") / "tiny-llama")


@pytest.fixture
def broken(checkpoint: Path, tmp_path: Path) -> Path:
    """A private copy of the checkpoint that a test may damage."""
    return Path(shutil.copytree(checkpoint, tmp_path / "copy"))


def test_loads_with_tokenizer_and_templates(checkpoint: Path) -> None:
    loaded = load_model(checkpoint, device="cpu")
    eos = special_token_id("<|endoftext|>")
    assert loaded.name == "tiny-llama"
    assert loaded.path == checkpoint
    assert (loaded.device, loaded.dtype) == (torch.device("cpu"), torch.float32)
    assert loaded.config.model_type == "llama"
    assert loaded.config.eos_token_ids == (eos,)
    assert loaded.tokenizer.eos_token_ids == frozenset({eos})
    assert loaded.fim.family == "codedraft"
    assert isinstance(loaded.chat, ChatTemplate)
    assert not any(p.requires_grad for p in loaded.model.parameters())
    assert all(p.dtype == torch.float32 for p in loaded.model.parameters())


def test_sharded_checkpoint_equals_single_file(tmp_path: Path) -> None:
    single = load_model(make_tiny_checkpoint(tmp_path / "single", "qwen2"), device="cpu")
    sharded_dir = make_tiny_checkpoint(tmp_path / "sharded", "qwen2", max_shard_size="30KB")
    assert (sharded_dir / "model.safetensors.index.json").is_file()
    assert len(weight_files(sharded_dir)) > 2
    sharded = load_model(sharded_dir, device="cpu")
    for (name, a), (_, b) in zip(
        single.model.state_dict().items(), sharded.model.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), name


def test_tied_embeddings_share_one_tensor(tmp_path: Path) -> None:
    loaded = load_model(make_tiny_checkpoint(tmp_path / "tied", tie_word_embeddings=True), device="cpu")
    assert loaded.model.lm_head.weight is loaded.model.model.embed_tokens.weight


def test_dtype_override(checkpoint: Path) -> None:
    loaded = load_model(checkpoint, device="cpu", dtype=torch.bfloat16)
    assert loaded.model.model.embed_tokens.weight.dtype == torch.bfloat16


def test_weight_estimate_counts_every_tensor(checkpoint: Path) -> None:
    loaded = load_model(checkpoint, device="cpu")
    params = sum(p.numel() for p in loaded.model.parameters())
    assert estimate_weight_bytes(weight_files(checkpoint), torch.float32) == 4 * params
    assert estimate_weight_bytes(weight_files(checkpoint), torch.bfloat16) == 2 * params


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match=r"model directory not found: .*nowhere"):
        load_model(tmp_path / "nowhere", device="cpu")


@pytest.mark.parametrize(
    ("remove", "message"),
    [
        ("config.json", r"missing config\.json"),
        ("tokenizer.json", r"missing tokenizer\.json"),
        ("model.safetensors", r"no \*\.safetensors weights"),
    ],
)
def test_missing_file(broken: Path, remove: str, message: str) -> None:
    (broken / remove).unlink()
    with pytest.raises(ModelLoadError, match=message):
        load_model(broken, device="cpu")


def test_missing_shard(tmp_path: Path) -> None:
    path = make_tiny_checkpoint(tmp_path / "sharded", max_shard_size="30KB")
    victim = weight_files(path)[1]
    victim.unlink()
    with pytest.raises(ModelLoadError, match=f"missing weight shard {victim.name}"):
        load_model(path, device="cpu")


def test_missing_tensor(tmp_path: Path) -> None:
    from safetensors.torch import load_file, save_file

    path = make_tiny_checkpoint(tmp_path / "m")
    tensors = load_file(path / "model.safetensors")
    del tensors["model.layers.1.mlp.up_proj.weight"]
    save_file(tensors, path / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(ModelLoadError, match=r"lacks weight model\.layers\.1\.mlp\.up_proj\.weight"):
        load_model(path, device="cpu")


def test_unsupported_architecture(broken: Path) -> None:
    config = json.loads((broken / "config.json").read_text())
    config["model_type"] = "gpt2"
    (broken / "config.json").write_text(json.dumps(config))
    with pytest.raises(
        ModelLoadError, match=r"unsupported architecture 'gpt2' .*supported: gemma3_text, llama, mistral"
    ):
        load_model(broken, device="cpu")


def test_unsupported_rope_scaling(broken: Path) -> None:
    config = json.loads((broken / "config.json").read_text())
    config["rope_parameters"] = {"rope_type": "longrope", "rope_theta": 10000.0}
    (broken / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelLoadError, match="unsupported rope_scaling type 'longrope'"):
        load_model(broken, device="cpu")


def test_corrupt_config(broken: Path) -> None:
    (broken / "config.json").write_text("{not json")
    with pytest.raises(ModelLoadError, match=r"cannot read .*config\.json"):
        load_model(broken, device="cpu")


def test_does_not_fit(checkpoint: Path) -> None:
    with pytest.raises(ModelLoadError, match=r"does not fit: needs about [0-9.]+ MiB .* 0\.1 MiB available"):
        load_model(checkpoint, device="cpu", memory_limit_bytes=100_000)


def test_old_style_rope_config_is_read(broken: Path) -> None:
    """Checkpoints written before transformers 5 use rope_theta + rope_scaling {"type": ...}."""
    config = json.loads((broken / "config.json").read_text())
    config.pop("rope_parameters")
    config["rope_theta"] = 5000.0
    config["rope_scaling"] = {"type": "linear", "factor": 2.0}
    (broken / "config.json").write_text(json.dumps(config))
    loaded = load_model(broken, device="cpu")
    assert loaded.config.rope_theta == 5000.0
    assert loaded.config.rope_scaling == {"rope_type": "linear", "factor": 2.0}


def test_device_resolution() -> None:
    assert resolve_device("cpu") == torch.device("cpu")
    assert default_dtype(torch.device("cpu")) == torch.float32
    assert default_dtype(torch.device("cuda")) == torch.bfloat16
    expected_auto = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == expected_auto
    with pytest.raises(DeviceError, match="unknown device 'tpu'"):
        resolve_device("tpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error raised without a GPU")
def test_cuda_without_gpu_is_a_clear_error(checkpoint: Path) -> None:
    with pytest.raises(DeviceError, match="no CUDA device is available"):
        resolve_device("cuda")
    with pytest.raises(ModelLoadError, match="no CUDA device is available"):
        load_model(checkpoint, device="cuda")


def test_corrupt_weights(broken: Path) -> None:
    (broken / "model.safetensors").write_bytes(b"\x00" * 64)
    with pytest.raises(ModelLoadError, match=r"cannot read weights file .*model\.safetensors"):
        load_model(broken, device="cpu")


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("hidden_act", "gelu", "unsupported hidden_act 'gelu'"),
        ("num_key_value_heads", 3, "num_attention_heads=4 is not a multiple of num_key_value_heads=3"),
        ("hidden_size", None, "invalid .*config.json: KeyError: 'hidden_size'"),
    ],
)
def test_invalid_config_values(broken: Path, key: str, value: object, message: str) -> None:
    config = json.loads((broken / "config.json").read_text())
    if value is None:
        del config[key]
    else:
        config[key] = value
    (broken / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelLoadError, match=message):
        load_model(broken, device="cpu")


def test_generation_config_adds_eos_ids(broken: Path) -> None:
    im_end = special_token_id("<|im_end|>")
    eos = special_token_id("<|endoftext|>")
    (broken / "generation_config.json").write_text(json.dumps({"eos_token_id": [eos, im_end]}))
    assert load_model(broken, device="cpu").tokenizer.eos_token_ids == frozenset({eos, im_end})


def test_config_with_fewer_layers_than_the_weights(broken: Path) -> None:
    config = json.loads((broken / "config.json").read_text())
    config["num_hidden_layers"] = 1
    (broken / "config.json").write_text(json.dumps(config))
    with pytest.raises(
        ModelLoadError, match=r"has weight model\.layers\.1\.\S+ and \d+ more that config\.json"
    ):
        load_model(broken, device="cpu")


def test_corrupt_tokenizer(broken: Path) -> None:
    (broken / "tokenizer.json").write_text('{"version": "1.0", "model": 3}')
    with pytest.raises(ModelLoadError, match=r"cannot load .*tokenizer\.json"):
        load_model(broken, device="cpu")


def test_chat_template_from_its_own_file(broken: Path) -> None:
    """Current transformers saves the template as chat_template.jinja, not in tokenizer_config.json."""
    config = json.loads((broken / "tokenizer_config.json").read_text())
    template = config.pop("chat_template")
    (broken / "tokenizer_config.json").write_text(json.dumps(config))
    assert load_model(broken, device="cpu").chat.source is None  # type: ignore[union-attr]
    (broken / "chat_template.jinja").write_text(template)
    loaded = load_model(broken, device="cpu")
    assert loaded.chat is not None and loaded.chat.source == template
    messages = [{"role": "user", "content": "hi"}]
    assert loaded.chat.render(messages, add_generation_prompt=True).endswith("<|im_start|>assistant\n")
