"""The reader of a GGUF file (llama.cpp, Ollama, LM Studio): configuration, tokenizer and weights from
one file, read and dequantized by the `gguf` package and mapped onto codedraft's architectures."""

from __future__ import annotations

from pathlib import Path

import torch

from inference.layers.linear import NATIVE_FORMS
from inference.loading.gguf_metadata import GGUFFile, model_config
from inference.loading.gguf_tokenizer import gguf_tokenizer
from inference.loading.gguf_weights import (
    block_quantized,
    check_tensor_types,
    has_kernel_blocks,
    read_native_state,
    read_state,
    weight_bytes,
)
from inference.loading.model_form import (
    LoadedModel,
    ModelLoadError,
    check_fits,
    loaded_model,
    prompting,
    resolve_placement,
    resolve_weights,
)


def load_gguf_model(
    path: Path,
    device: str = "auto",
    dtype: torch.dtype | None = None,
    *,
    memory_limit_bytes: int | None = None,
    weights: str | None = None,
) -> LoadedModel:
    """Load the GGUF file at `path`, its weights dequantized to `dtype` (default per device) on `device`
    and stored in `weights` form (float32 | float16 | q4_1 | q4_1_q8 | native | native_q8 | auto, see
    `inference.layers.linear` and `resolve_weights`; None: plain `nn.Linear`s). The native forms keep
    the matrices in the memory-mapped file's own blocks: nothing is copied but the q/k rows.

    Everything is checked (architecture, tensor types, memory) before any weight is dequantized.
    """
    if not path.is_file():
        raise ModelLoadError(f"GGUF file not found: {path}")
    file = GGUFFile(path)
    config = model_config(file)
    check_tensor_types(file)
    torch_device, torch_dtype = resolve_placement(device, dtype)
    blocks = block_quantized(file)
    weights = resolve_weights(weights, torch_device, torch_dtype, blocks, has_kernel_blocks(file))
    native = weights in NATIVE_FORMS
    needed = weight_bytes(file, torch_dtype, native)
    check_fits(path.name, needed, torch_device, torch_dtype, memory_limit_bytes)
    try:
        tokenizer = gguf_tokenizer(file)
        prompts = prompting(tokenizer)
    except ModelLoadError:
        raise
    except Exception as exc:  # tokenizers raises untyped errors on a bad vocabulary, jinja2 its own
        raise ModelLoadError(f"cannot build the tokenizer of {path.name}: {exc}") from exc
    if native:
        state, matrices = read_native_state(file, config)
    else:
        state, matrices = read_state(file, config, torch_device, torch_dtype), {}
    return loaded_model(
        config=config,
        state=state,
        blocks=matrices,
        tokenizer=tokenizer,
        prompts=prompts,
        path=path,
        name=path.stem,
        placement=(torch_device, torch_dtype),
        weights=weights,
        described_by=f"the metadata of {path.name}",
        block_quantized=blocks,
    )
