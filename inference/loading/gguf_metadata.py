"""An open GGUF file (`gguf.GGUFReader`) and the `ModelConfig` its metadata describes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gguf import Keys

from inference.layers.rotary import RotaryEmbedding
from inference.loading.gguf_checked_reader import CheckedReader, array_length
from inference.loading.model_form import ModelLoadError
from inference.model_config import ModelConfig

# GGUF `general.architecture` -> codedraft's model_type. llama.cpp writes Mistral models as "llama".
ARCHITECTURES = {
    "llama": "llama",
    "mistral": "mistral",
    "qwen2": "qwen2",
    "qwen3": "qwen3",
    "gemma3": "gemma3_text",
}
# llama.cpp's defaults for Gemma 3 files that leave them out (src/models/gemma3.cpp).
GEMMA3_LOCAL_ROPE_BASE = 10000.0
GEMMA3_27B_LAYERS = 62


class GGUFFile:
    """A GGUF file opened for reading: its metadata by key and its (memory-mapped) tensors."""

    def __init__(self, path: Path) -> None:
        try:
            self.reader = CheckedReader(path)
        except Exception as exc:  # the reader raises ValueError, struct or numpy errors on a damaged file
            raise ModelLoadError(f"cannot read GGUF file {path}: {type(exc).__name__}: {exc}") from exc
        self.path = path
        self.architecture = ""  # `{arch}` in a key is filled from here
        self.architecture = str(self.required("general.architecture"))
        self.tensor_names = frozenset(t.name for t in self.reader.tensors)

    def value(self, key: str, default: Any = None) -> Any:
        """The value of metadata `key` (a number, string or list), or `default` when absent.

        `key` may hold `{arch}`, filled with the file's architecture.
        """
        field = self.reader.fields.get(key.format(arch=self.architecture))
        return default if field is None else field.contents()

    def required(self, key: str) -> Any:
        """The value of metadata `key`; a file without it is refused."""
        value = self.value(key)
        if value is None:
            name = key.format(arch=self.architecture)
            raise ModelLoadError(f"GGUF file {self.path.name} lacks the metadata {name}")
        return value

    def count(self, key: str) -> int:
        """The number of items of array metadata `key` (0 when absent), without decoding them."""
        field = self.reader.fields.get(key)
        return 0 if field is None else array_length(field)


def _rope_scaling(file: GGUFFile) -> dict[str, Any] | None:
    kind = file.value(Keys.Rope.SCALING_TYPE)
    if kind in (None, "none"):
        return None
    scaling: dict[str, Any] = {"rope_type": str(kind), "factor": file.value(Keys.Rope.SCALING_FACTOR, 1.0)}
    original = file.value(Keys.Rope.SCALING_ORIG_CTX_LEN)
    if original is not None:
        scaling["original_max_position_embeddings"] = int(original)
    return scaling


def _gemma3_settings(file: GGUFFile, raw: dict[str, Any]) -> dict[str, Any]:
    """The `config.json` keys of a Gemma 3 file that its metadata gives, or llama.cpp's defaults."""
    layers, heads = int(raw["num_hidden_layers"]), int(raw["num_attention_heads"])
    # llama.cpp scales queries by 1/sqrt(head_dim), except the 27B model's hidden_size / heads.
    scalar = raw["hidden_size"] // heads if layers == GEMMA3_27B_LAYERS else raw["head_dim"]
    settings: dict[str, Any] = {
        "hidden_activation": "gelu_pytorch_tanh",
        "query_pre_attn_scalar": scalar,
        "rope_local_base_freq": float(file.value(Keys.Rope.FREQ_BASE_SWA, GEMMA3_LOCAL_ROPE_BASE)),
        "final_logit_softcapping": file.value(Keys.LLM.FINAL_LOGIT_SOFTCAPPING),
        "attn_logit_softcapping": file.value(Keys.LLM.ATTN_LOGIT_SOFTCAPPING),
    }
    # The layer pattern: one flag per layer (true: sliding), or n (every n-th layer global; 6 when absent).
    pattern = file.value(Keys.Attention.SLIDING_WINDOW_PATTERN)
    if isinstance(pattern, list):
        if len(pattern) != layers or not all(isinstance(flag, bool) for flag in pattern):
            raise ModelLoadError(
                f"{file.path.name} has a sliding-window layer pattern of {len(pattern)} entries "
                f"for {layers} layers ({Keys.Attention.SLIDING_WINDOW_PATTERN.format(arch='gemma3')})"
            )
        settings["layer_types"] = ["sliding_attention" if flag else "full_attention" for flag in pattern]
    elif pattern is not None:
        if int(pattern) < 1:
            raise ModelLoadError(f"{file.path.name} has the sliding-window layer pattern {pattern}")
        settings["sliding_window_pattern"] = int(pattern)
    return settings


def model_config(file: GGUFFile) -> ModelConfig:
    """The architecture settings of the file, as the `config.json` of the same model would give them."""
    if file.architecture not in ARCHITECTURES:
        supported = ", ".join(sorted(ARCHITECTURES))
        raise ModelLoadError(
            f"unsupported GGUF architecture {file.architecture!r} in {file.path.name} "
            f"(supported: {supported})"
        )
    if "rope_freqs.weight" in file.tensor_names:
        raise ModelLoadError(
            f"{file.path.name} carries rotary frequency factors (rope_freqs.weight, Llama 3.1-style "
            "rope scaling), which codedraft does not load from GGUF; use the model's Hugging Face folder"
        )
    hidden = int(file.required(Keys.LLM.EMBEDDING_LENGTH))
    heads = int(file.required(Keys.Attention.HEAD_COUNT))
    head_dim = int(file.value(Keys.Attention.KEY_LENGTH, hidden // heads))
    rotary_dims = int(file.value(Keys.Rope.DIMENSION_COUNT, head_dim))
    if rotary_dims != head_dim:
        raise ModelLoadError(
            f"{file.path.name} rotates {rotary_dims} of {head_dim} head dimensions; partial rotary "
            "embeddings are not supported"
        )
    vocab = file.value(Keys.LLM.VOCAB_SIZE) or file.count(Keys.Tokenizer.LIST)
    raw: dict[str, Any] = {
        "model_type": ARCHITECTURES[file.architecture],
        "vocab_size": int(vocab),
        "hidden_size": hidden,
        "intermediate_size": int(file.required(Keys.LLM.FEED_FORWARD_LENGTH)),
        "num_hidden_layers": int(file.required(Keys.LLM.BLOCK_COUNT)),
        "num_attention_heads": heads,
        "num_key_value_heads": int(file.value(Keys.Attention.HEAD_COUNT_KV, heads)),
        "head_dim": head_dim,
        "max_position_embeddings": int(file.required(Keys.LLM.CONTEXT_LENGTH)),
        "rms_norm_eps": float(file.value(Keys.Attention.LAYERNORM_RMS_EPS, 1e-6)),
        "rope_theta": float(file.value(Keys.Rope.FREQ_BASE, 10000.0)),
        "rope_scaling": _rope_scaling(file),
        # llama.cpp omits the output matrix of a model whose embeddings are tied.
        "tie_word_embeddings": "output.weight" not in file.tensor_names,
        "attention_bias": "blk.0.attn_q.bias" in file.tensor_names,
        "mlp_bias": "blk.0.ffn_up.bias" in file.tensor_names,
        "bos_token_id": file.value(Keys.Tokenizer.BOS_ID),
        "eos_token_id": file.value(Keys.Tokenizer.EOS_ID),
    }
    window = file.value(Keys.Attention.SLIDING_WINDOW)
    if window:
        raw["sliding_window"] = int(window)
    if file.architecture == "gemma3":
        raw.update(_gemma3_settings(file, raw))
    try:
        config = ModelConfig.from_dict(raw)
        RotaryEmbedding(config)  # rejects rope scaling kinds we do not implement
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelLoadError(f"invalid metadata in {file.path.name}: {type(exc).__name__}: {exc}") from exc
    return config
