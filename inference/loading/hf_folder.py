"""The reader of a Hugging Face model folder (config.json, safetensors, tokenizer.json).

Only `safetensors` and `tokenizers` are used.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors import safe_open

from inference.layers.rotary import RotaryEmbedding
from inference.loading.model_form import (
    LoadedModel,
    ModelLoadError,
    check_fits,
    loaded_model,
    prompting,
    resolve_placement,
    resolve_weights,
)
from inference.model_config import ModelConfig
from inference.models.registry import ARCHITECTURES, architecture_for
from inference.prompts.chat import ChatTemplateError
from inference.tokenizer import Tokenizer


def _read_config(directory: Path) -> ModelConfig:
    config_path = directory / "config.json"
    if not config_path.is_file():
        raise ModelLoadError(f"missing config.json in model directory {directory}")
    try:
        raw = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelLoadError(f"cannot read {config_path}: {exc}") from exc
    model_type = raw.get("model_type") if isinstance(raw, dict) else None
    if architecture_for(str(model_type)) is None:
        supported = ", ".join(sorted(ARCHITECTURES))
        raise ModelLoadError(
            f"unsupported architecture {model_type!r} in {config_path} (supported: {supported})"
        )
    try:
        config = ModelConfig.from_dict(raw)
        RotaryEmbedding(config)  # rejects rope_scaling variants we do not implement
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelLoadError(f"invalid {config_path}: {type(exc).__name__}: {exc}") from exc
    return config


def _generation_eos_ids(directory: Path) -> tuple[int, ...]:
    """Extra end-of-sequence ids from generation_config.json (chat models list their turn end there)."""
    path = directory / "generation_config.json"
    try:
        eos = json.loads(path.read_text(encoding="utf-8")).get("eos_token_id") if path.is_file() else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return ()
    values = eos if isinstance(eos, list) else [eos]
    return tuple(int(v) for v in values if isinstance(v, int))


def weight_files(directory: Path) -> list[Path]:
    """The safetensors files of a checkpoint: the shards its index lists, or every *.safetensors."""
    index_path = directory / "model.safetensors.index.json"
    if index_path.is_file():
        try:
            weight_map = json.loads(index_path.read_text(encoding="utf-8"))["weight_map"]
        except (OSError, KeyError, TypeError, json.JSONDecodeError) as exc:
            raise ModelLoadError(f"cannot read {index_path}: {exc}") from exc
        shards = [directory / name for name in sorted(set(weight_map.values()))]
        for shard in shards:
            if not shard.is_file():
                raise ModelLoadError(f"missing weight shard {shard.name} listed in {index_path}")
        return shards
    files = sorted(directory.glob("*.safetensors"))
    if not files:
        hint = " (only safetensors weights are supported)" if any(directory.glob("*.bin")) else ""
        raise ModelLoadError(f"no *.safetensors weights in model directory {directory}{hint}")
    return files


def estimate_weight_bytes(files: list[Path], dtype: torch.dtype) -> int:
    """Bytes the weights take once converted to `dtype`, from the safetensors headers alone."""
    elem = torch.empty((), dtype=dtype).element_size()
    total = 0
    for file in files:
        try:
            with safe_open(str(file), framework="pt") as handle:
                for name in handle.keys():
                    numel = 1
                    for dim in handle.get_slice(name).get_shape():
                        numel *= dim
                    total += numel * elem
        except Exception as exc:  # safetensors raises its own error type for a damaged file
            raise ModelLoadError(f"cannot read weights file {file}: {exc}") from exc
    return total


def _read_safetensors(files: list[Path], device: torch.device, dtype: torch.dtype) -> dict[str, torch.Tensor]:
    state: dict[str, torch.Tensor] = {}
    for file in files:
        with safe_open(str(file), framework="pt", device="cpu") as handle:
            for name in handle.keys():
                tensor = handle.get_tensor(name)
                state[name] = tensor.to(
                    device=device, dtype=dtype if tensor.is_floating_point() else tensor.dtype
                )
    return state


def load_hf_folder(
    directory: Path,
    device: str = "auto",
    dtype: torch.dtype | None = None,
    *,
    memory_limit_bytes: int | None = None,
    weights: str | None = None,
) -> LoadedModel:
    """Load the Hugging Face folder `directory` onto `device` (auto|cpu|cuda) in `dtype` (default per
    device).

    memory_limit_bytes: memory the weights may use (default: what the device has free); a checkpoint
    that needs more is refused before anything is loaded.
    weights: float32 | float16, how the projections are stored for serving on the CPU (see
    `inference.layers.linear`; the quantized forms need the CPU and float32); auto: the CPU default
    (see `resolve_weights`); None keeps the checkpoint's own layout (plain `nn.Linear`s), for code
    that reads the weights.
    """
    if not directory.is_dir():
        raise ModelLoadError(f"model directory not found: {directory}")
    config = _read_config(directory)
    files = weight_files(directory)
    if not (directory / "tokenizer.json").is_file():
        raise ModelLoadError(f"missing tokenizer.json in model directory {directory}")
    torch_device, torch_dtype = resolve_placement(device, dtype)
    weights = resolve_weights(weights, torch_device, torch_dtype)
    needed = estimate_weight_bytes(files, torch_dtype)
    check_fits(directory.name, needed, torch_device, torch_dtype, memory_limit_bytes)

    try:
        eos_ids = (*config.eos_token_ids, *_generation_eos_ids(directory))
        tokenizer = Tokenizer.from_dir(directory, extra_eos_ids=eos_ids)
        prompts = prompting(tokenizer)
    except (OSError, ValueError, ChatTemplateError) as exc:
        raise ModelLoadError(f"cannot load the tokenizer of {directory}: {exc}") from exc
    except Exception as exc:  # the tokenizers library raises its own untyped errors on bad JSON
        raise ModelLoadError(f"cannot load {directory / 'tokenizer.json'}: {exc}") from exc

    state = _read_safetensors(files, torch_device, torch_dtype)
    architecture = architecture_for(config.model_type)
    if architecture is not None:  # checked by _read_config
        architecture.checkpoint_state(state)
    return loaded_model(
        config=config,
        state=state,
        tokenizer=tokenizer,
        prompts=prompts,
        path=directory,
        name=directory.name,
        placement=(torch_device, torch_dtype),
        weights=weights,
    )
