"""Load a Hugging Face model directory (config, safetensors, tokenizer) into a `LoadedModel`.

Only `safetensors` and `tokenizers` are used. Every way a checkpoint can be unusable (missing
file, unsupported architecture, not enough memory) ends in `ModelLoadError` with one line that
names the problem.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import safe_open

from inference.device import DeviceError, available_memory_bytes, default_dtype, resolve_device
from inference.layers.cpu_kernels import KernelBuildError, load_cpu_kernels
from inference.layers.linear import DEFAULT_CPU_WEIGHTS, KERNEL_FORMS, WEIGHT_FORMATS
from inference.layers.rotary import RotaryEmbedding
from inference.models.base import CausalLM
from inference.models.config import ModelConfig
from inference.models.registry import ARCHITECTURES, architecture_for
from inference.prompts.chat import ChatTemplate, ChatTemplateError
from inference.prompts.fim import FimTemplate, fim_template_for
from inference.tokenizer import Tokenizer

log = logging.getLogger(__name__)

# Activations, the allocator and the KV pool need room beyond the weights themselves.
MEMORY_HEADROOM = 1.1


class ModelLoadError(Exception):
    """A model directory cannot be loaded; the message is one line naming the problem."""


@dataclass
class LoadedModel:
    """A model ready to run, with what the engine needs to prompt it."""

    model: CausalLM
    config: ModelConfig
    tokenizer: Tokenizer
    fim: FimTemplate
    chat: ChatTemplate | None
    path: Path
    device: torch.device
    dtype: torch.dtype
    name: str
    weights: str | None = None
    # Whether the q4_1 weights form holds the checkpoint's weights exactly (a GGUF in Q4_1 / Q8_0).
    block_quantized: bool = False


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


def resolve_weights(
    weights: str | None, device: torch.device, dtype: torch.dtype, block_quantized: bool = False
) -> str | None:
    """The weights form to build: `weights` itself, checked, or for "auto" the CPU default in float32
    and the checkpoint's own layout elsewhere. The CPU default is q4_1 for a checkpoint whose weights
    that form holds exactly (`block_quantized`: a GGUF in Q4_1 / Q8_0) when its kernels build here,
    else `DEFAULT_CPU_WEIGHTS`. Refuses a form the device or dtype cannot serve (the packed forms:
    CPU and float32 only) and q4_1 where its kernels cannot be built."""
    if weights is None:
        return None
    if weights == "auto":
        if device.type != "cpu" or dtype != torch.float32:
            return None
        if not block_quantized:
            return DEFAULT_CPU_WEIGHTS
        try:
            load_cpu_kernels()
        except KernelBuildError as exc:
            log.warning("serving %s weights instead of q4_1: %s", DEFAULT_CPU_WEIGHTS, exc)
            return DEFAULT_CPU_WEIGHTS
        return "q4_1"
    if weights not in WEIGHT_FORMATS:
        raise ModelLoadError(f"unknown weights {weights!r} (choose from {', '.join(WEIGHT_FORMATS)})")
    if weights != "float32" and (device.type != "cpu" or dtype != torch.float32):
        raise ModelLoadError(
            f"weights {weights} need the CPU and float32 activations (got {device.type}, {dtype}); "
            "use --weights float32"
        )
    if weights in KERNEL_FORMS:
        try:
            load_cpu_kernels()
        except KernelBuildError as exc:
            raise ModelLoadError(f"weights {weights}: {exc}") from exc
    return weights


def build_model(
    config: ModelConfig,
    state: dict[str, torch.Tensor],
    device: torch.device,
    described_by: str = "config.json",
    weights: str | None = None,
) -> CausalLM:
    """The architecture of `config` holding the weights `state` (checked by name and shape), for inference.

    described_by: what the configuration came from, for the error messages.
    weights: on the CPU, how the projections are stored for serving (`inference.layers.linear`);
    None, or another device: plain `nn.Linear`s laid out as in the checkpoint.
    """
    architecture = architecture_for(config.model_type)
    if architecture is None:
        supported = ", ".join(sorted(ARCHITECTURES))
        raise ModelLoadError(f"unsupported architecture {config.model_type!r} (supported: {supported})")
    with torch.device("meta"):
        model = architecture(config)
    expected = set(model.state_dict())
    if model.config.tie_word_embeddings:
        expected.discard("lm_head.weight")
        state.pop("lm_head.weight", None)
    missing = sorted(expected - set(state))
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise ModelLoadError(f"checkpoint lacks weight {missing[0]}{more}")
    # Older exports carry the rotary buffer; any other stray tensor means the config is not this model's.
    unexpected = sorted(k for k in set(state) - expected if not k.endswith("rotary_emb.inv_freq"))
    if unexpected:
        more = f" and {len(unexpected) - 1} more" if len(unexpected) > 1 else ""
        raise ModelLoadError(
            f"checkpoint has weight {unexpected[0]}{more} that {described_by} does not describe"
        )
    for name, tensor in state.items():
        if name in expected and tuple(tensor.shape) != tuple(model.state_dict()[name].shape):
            shape = tuple(model.state_dict()[name].shape)
            raise ModelLoadError(
                f"weight {name} has shape {tuple(tensor.shape)}, {described_by} implies {shape}"
            )
    model.load_state_dict({k: v for k, v in state.items() if k in expected}, strict=False, assign=True)
    if model.config.tie_word_embeddings:
        model.lm_head.weight = model.model.embed_tokens.weight
    model.rotary = RotaryEmbedding(model.config).to(device)
    model.eval().requires_grad_(False)
    if weights is not None and device.type == "cpu":
        model.pack_weights(weights)
    return model


def resolve_placement(device: str, dtype: torch.dtype | None) -> tuple[torch.device, torch.dtype]:
    """The torch device `device` (auto|cpu|cuda) names, and `dtype` or that device's default dtype."""
    try:
        torch_device = resolve_device(device)
    except DeviceError as exc:
        raise ModelLoadError(str(exc)) from exc
    return torch_device, dtype or default_dtype(torch_device)


def check_fits(
    name: str, needed_bytes: int, device: torch.device, dtype: torch.dtype, limit: int | None
) -> None:
    """Refuse a model whose weights (`needed_bytes` in `dtype`, before headroom) exceed the memory at hand.

    limit: the memory the weights may use (None: what `device` has free).
    """
    needed = int(needed_bytes * MEMORY_HEADROOM)
    available = limit if limit is not None else available_memory_bytes(device)
    if needed > available:
        raise ModelLoadError(
            f"model {name} does not fit: needs about {needed / 2**20:.1f} MiB in {dtype} "
            f"on {device}, {available / 2**20:.1f} MiB available"
        )


def load_model(
    path: str | Path,
    device: str = "auto",
    dtype: torch.dtype | None = None,
    *,
    memory_limit_bytes: int | None = None,
    weights: str | None = None,
) -> LoadedModel:
    """Load the model at `path` (a Hugging Face directory or a GGUF file) onto `device` (auto|cpu|cuda)
    in `dtype` (default per device).

    memory_limit_bytes: memory the weights may use (default: what the device has free); a checkpoint
    that needs more is refused before anything is loaded.
    weights: float32 | float16, how the projections are stored for serving on the CPU (see
    `inference.layers.linear`; the quantized forms need the CPU and float32); auto: the CPU default
    (see `resolve_weights`); None keeps the checkpoint's own layout (plain `nn.Linear`s), for code
    that reads the weights.
    """
    directory = Path(path).expanduser()
    if directory.is_file() or directory.suffix.lower() == ".gguf":
        from inference.gguf_files.loader import load_gguf_model

        return load_gguf_model(
            directory, device, dtype, memory_limit_bytes=memory_limit_bytes, weights=weights
        )
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
        fim = fim_template_for(tokenizer)
        chat = ChatTemplate.from_tokenizer(tokenizer)
    except (OSError, ValueError, ChatTemplateError) as exc:
        raise ModelLoadError(f"cannot load the tokenizer of {directory}: {exc}") from exc
    except Exception as exc:  # the tokenizers library raises its own untyped errors on bad JSON
        raise ModelLoadError(f"cannot load {directory / 'tokenizer.json'}: {exc}") from exc

    state = _read_safetensors(files, torch_device, torch_dtype)
    model = build_model(config, state, torch_device, weights=weights)
    return LoadedModel(
        model=model,
        config=config,
        tokenizer=tokenizer,
        fim=fim,
        chat=chat,
        path=directory,
        device=torch_device,
        dtype=torch_dtype,
        name=directory.name,
        weights=weights,
    )
