"""`load_gguf_model`: a GGUF file (llama.cpp, Ollama, LM Studio) into the `LoadedModel` the engine runs."""

from __future__ import annotations

from pathlib import Path

import torch

from inference.gguf_files.metadata import GGUFFile, model_config
from inference.gguf_files.tokenizer import gguf_tokenizer
from inference.gguf_files.weights import block_quantized, check_tensor_types, read_state, weight_bytes
from inference.loading import (
    LoadedModel,
    ModelLoadError,
    build_model,
    check_fits,
    resolve_placement,
    resolve_weights,
)
from inference.prompts.chat import ChatTemplate
from inference.prompts.fim import fim_template_for


def load_gguf_model(
    path: Path,
    device: str = "auto",
    dtype: torch.dtype | None = None,
    *,
    memory_limit_bytes: int | None = None,
    weights: str | None = None,
) -> LoadedModel:
    """Load the GGUF file at `path`, its weights dequantized to `dtype` (default per device) on `device`
    and stored in `weights` form (float32 | float16 | q4_1 | auto, see `inference.layers.linear` and
    `resolve_weights`; None: plain `nn.Linear`s).

    Everything is checked (architecture, tensor types, memory) before any weight is dequantized.
    """
    if not path.is_file():
        raise ModelLoadError(f"GGUF file not found: {path}")
    file = GGUFFile(path)
    config = model_config(file)
    check_tensor_types(file)
    torch_device, torch_dtype = resolve_placement(device, dtype)
    blocks = block_quantized(file)
    weights = resolve_weights(weights, torch_device, torch_dtype, blocks)
    check_fits(path.name, weight_bytes(file, torch_dtype), torch_device, torch_dtype, memory_limit_bytes)
    try:
        tokenizer = gguf_tokenizer(file)
        fim = fim_template_for(tokenizer)
        chat = ChatTemplate.from_tokenizer(tokenizer)
    except ModelLoadError:
        raise
    except Exception as exc:  # tokenizers raises untyped errors on a bad vocabulary, jinja2 its own
        raise ModelLoadError(f"cannot build the tokenizer of {path.name}: {exc}") from exc
    state = read_state(file, config, torch_device, torch_dtype)
    described_by = f"the metadata of {path.name}"
    model = build_model(config, state, torch_device, described_by=described_by, weights=weights)
    return LoadedModel(
        model=model,
        config=config,
        tokenizer=tokenizer,
        fim=fim,
        chat=chat,
        path=path,
        device=torch_device,
        dtype=torch_dtype,
        name=path.stem,
        weights=weights,
        block_quantized=blocks,
    )
