"""Building the Llama models of a recipe and writing them in the Hugging Face layout (fp16)."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.utils import logging as transformers_logging

from training.recipe import ModelShape


def llama_config(
    shape: ModelShape, vocab_size: int, seq_len: int, rope_theta: float, eos_id: int
) -> LlamaConfig:
    """A Llama config with tied embeddings (they are a large share of parameters at this size)."""
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=shape.hidden_size,
        intermediate_size=shape.intermediate_size,
        num_hidden_layers=shape.num_layers,
        num_attention_heads=shape.num_heads,
        num_key_value_heads=shape.num_kv_heads,
        head_dim=shape.hidden_size // shape.num_heads,
        max_position_embeddings=seq_len,
        rms_norm_eps=1e-5,
        rope_parameters={"rope_type": "default", "rope_theta": rope_theta},
        tie_word_embeddings=True,
        bos_token_id=eos_id,
        eos_token_id=eos_id,
        pad_token_id=None,
        attention_bias=False,
        mlp_bias=False,
    )
    config._attn_implementation = "sdpa"
    return config


def build_model(config: LlamaConfig, seed: int) -> LlamaForCausalLM:
    """A freshly initialised float32 model; the seed alone fixes its weights."""
    torch.manual_seed(seed)
    return LlamaForCausalLM(config)


def parameter_count(model: torch.nn.Module) -> int:
    """Unique parameters (tied embeddings counted once)."""
    return sum(p.numel() for p in model.parameters())


def save_fp16(model: LlamaForCausalLM, out_dir: Path, tokenizer_dir: Path) -> None:
    """Write ``config.json``, fp16 ``model.safetensors`` and the tokenizer files into ``out_dir``.

    Written into a sibling temporary folder first and then moved, so a reader never sees a half
    written checkpoint (the training run exports periodically while the engine may be loading it).
    """
    out_dir = out_dir.resolve()
    staging = out_dir.with_name(out_dir.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    transformers_logging.disable_progress_bar()
    half: LlamaForCausalLM = copy.deepcopy(model)
    half.half()
    half.config.dtype = torch.float16
    half.save_pretrained(staging, safe_serialization=True)
    (staging / "generation_config.json").unlink(missing_ok=True)
    _add_classic_config_keys(staging / "config.json", model.config)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(tokenizer_dir / name, staging / name)
    for file in staging.iterdir():
        file.chmod(0o644)  # safetensors writes 0600; the shipped weights are for every user
    shutil.rmtree(out_dir, ignore_errors=True)
    staging.rename(out_dir)


def _add_classic_config_keys(path: Path, config: LlamaConfig) -> None:
    """transformers 5 writes ``rope_parameters`` and ``dtype``; loaders written against released
    checkpoints read ``rope_theta`` and ``torch_dtype``. Writing both keeps every reader happy."""
    data = json.loads(path.read_text())
    rope = data.get("rope_parameters") or {}
    data["rope_theta"] = float(rope.get("rope_theta", getattr(config, "rope_theta", 10000.0)))
    data["torch_dtype"] = "float16"
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
