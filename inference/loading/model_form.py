"""The form every reader loads a model into, and the steps all readers share.

A reader per format (``hf_folder.py`` for Hugging Face folders, ``gguf_file.py`` for GGUF files)
reads a configuration, a tokenizer and a weight state; :func:`loaded_model` checks and builds the
model from them, in one place. Every way a checkpoint can be unusable (missing file, unsupported
architecture, not enough memory) ends in `ModelLoadError` with one line that names the problem.
"""

from __future__ import annotations

import ctypes
import logging
from dataclasses import dataclass
from pathlib import Path

import torch

from inference.device import DeviceError, available_memory_bytes, default_dtype, resolve_device
from inference.layers.cpu_kernels import KernelBuildError, load_cpu_kernels
from inference.layers.gguf_linear import BlockMatrix
from inference.layers.linear import (
    DEFAULT_CPU_WEIGHTS,
    KERNEL_FORMS,
    NATIVE_FORMS,
    NATIVE_Q8_FORM,
    WEIGHT_FORMATS,
)
from inference.model_config import ModelConfig
from inference.models.base import CausalLM
from inference.models.registry import ARCHITECTURES, architecture_for
from inference.prompts.chat import ChatTemplate
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
    # Whether `auto` serves the checkpoint as q4_1, which holds its weights exactly (a GGUF in Q4_1 /
    # Q8_0 with a Q4_1 matrix at least: `block_quantized`).
    block_quantized: bool = False


def resolve_weights(
    weights: str | None,
    device: torch.device,
    dtype: torch.dtype,
    block_quantized: bool = False,
    native: bool = False,
) -> str | None:
    """The weights form to build: `weights` itself, checked, or for "auto" the CPU default in float32
    and the checkpoint's own layout elsewhere. The CPU default is q4_1 for a checkpoint whose weights
    that form holds exactly (`block_quantized`: a GGUF in Q4_1 / Q8_0 with a Q4_1 matrix), native_q8
    for any other GGUF with matrices in a block type its kernels read (`native`: 8-bit activations, as
    llama.cpp serves the same file; agreement measured in docs/models.md), when the kernels build; else
    `DEFAULT_CPU_WEIGHTS`. Refuses a form the device or dtype cannot serve (the packed forms: CPU and
    float32 only), a form whose kernels cannot be built, and the native forms for a checkpoint
    without blocks."""
    if weights is None:
        return None
    if weights == "auto":
        if device.type != "cpu" or dtype != torch.float32:
            return None
        if not (block_quantized or native):
            return DEFAULT_CPU_WEIGHTS
        chosen = "q4_1" if block_quantized else NATIVE_Q8_FORM
        try:
            load_cpu_kernels()
        except KernelBuildError as exc:
            log.warning("serving %s weights instead of %s: %s", DEFAULT_CPU_WEIGHTS, chosen, exc)
            return DEFAULT_CPU_WEIGHTS
        return chosen
    if weights not in WEIGHT_FORMATS:
        raise ModelLoadError(f"unknown weights {weights!r} (choose from {', '.join(WEIGHT_FORMATS)})")
    if weights in NATIVE_FORMS and not native:
        raise ModelLoadError(
            f"weights {weights} serve a GGUF file's own quantized blocks; this checkpoint has none (use q4_1)"
        )
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
    blocks: dict[str, BlockMatrix] | None = None,
) -> CausalLM:
    """The architecture of `config` holding the weights `state` (checked by name and shape), for inference.

    described_by: what the configuration came from, for the error messages.
    weights: on the CPU, how the projections are stored for serving (`inference.layers.linear`);
    None, or another device: plain `nn.Linear`s laid out as in the checkpoint.
    blocks: weights left in a GGUF file's blocks (the native form), by name, beside `state`.
    """
    blocks = blocks or {}
    architecture = architecture_for(config.model_type)
    if architecture is None:
        supported = ", ".join(sorted(ARCHITECTURES))
        raise ModelLoadError(f"unsupported architecture {config.model_type!r} (supported: {supported})")
    with torch.device("meta"):
        model = architecture(config)
    model_shapes = {name: tuple(tensor.shape) for name, tensor in model.state_dict().items()}
    expected = set(model_shapes)
    if model.config.tie_word_embeddings:
        expected.discard("lm_head.weight")
        state.pop("lm_head.weight", None)
        blocks.pop("lm_head.weight", None)
    missing = sorted(expected - set(state) - set(blocks))
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise ModelLoadError(f"checkpoint lacks weight {missing[0]}{more}")
    # Older exports carry the rotary buffer; any other stray tensor means the config is not this model's.
    stray = (set(state) | set(blocks)) - expected
    unexpected = sorted(k for k in stray if not k.endswith("rotary_emb.inv_freq"))
    if unexpected:
        more = f" and {len(unexpected) - 1} more" if len(unexpected) > 1 else ""
        raise ModelLoadError(
            f"checkpoint has weight {unexpected[0]}{more} that {described_by} does not describe"
        )
    shapes = {name: tuple(tensor.shape) for name, tensor in state.items()}
    shapes.update((name, matrix.shape) for name, matrix in blocks.items())
    for name, shape in shapes.items():
        if name in expected and shape != model_shapes[name]:
            implied = model_shapes[name]
            raise ModelLoadError(f"weight {name} has shape {shape}, {described_by} implies {implied}")
    model.load_state_dict({k: v for k, v in state.items() if k in expected}, strict=False, assign=True)
    model.place_blocks(blocks, int8_activations=weights == NATIVE_Q8_FORM)
    if model.config.tie_word_embeddings and "model.embed_tokens.weight" not in blocks:
        model.lm_head.weight = model.model.embed_tokens.weight
    model.init_rotary(device)
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


def prompting(tokenizer: Tokenizer) -> tuple[FimTemplate, ChatTemplate | None]:
    """The model's own prompt layouts, from its tokenizer (raises what the templates raise)."""
    return fim_template_for(tokenizer), ChatTemplate.from_tokenizer(tokenizer)


def return_freed_memory() -> None:
    """Give the memory that loading freed back to the system. Loading frees more than the model keeps
    (the file's parsed metadata, the tokenizer's build, dequantized copies, packing buffers), and glibc
    keeps freed heap memory resident: SmolLM2's daemon was 1,170 MiB resident after loading, 550 MiB
    after this. Nothing outside glibc has `malloc_trim`; there this does nothing."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def loaded_model(
    *,
    config: ModelConfig,
    state: dict[str, torch.Tensor],
    tokenizer: Tokenizer,
    prompts: tuple[FimTemplate, ChatTemplate | None],
    path: Path,
    name: str,
    placement: tuple[torch.device, torch.dtype],
    weights: str | None,
    described_by: str = "config.json",
    block_quantized: bool = False,
    blocks: dict[str, BlockMatrix] | None = None,
) -> LoadedModel:
    """The model built from what a reader read (``state`` and ``blocks`` checked against ``config``),
    ready to run."""
    device, dtype = placement
    fim, chat = prompts
    model = build_model(config, state, device, described_by=described_by, weights=weights, blocks=blocks)
    return LoadedModel(
        model=model,
        config=config,
        tokenizer=tokenizer,
        fim=fim,
        chat=chat,
        path=path,
        device=device,
        dtype=dtype,
        name=name,
        weights=weights,
        block_quantized=block_quantized,
    )
