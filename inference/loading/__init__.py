"""Loading the model files users hold into the form the engine runs (`LoadedModel`).

``model_form.py`` holds that form and the steps every reader shares; ``hf_folder.py`` reads a Hugging
Face folder, ``gguf_file.py`` (with ``gguf_metadata``, ``gguf_tokenizer``, ``gguf_weights``) a GGUF
file; :func:`load_model` chooses the reader.
"""

from __future__ import annotations

from pathlib import Path

import torch

from inference.loading.hf_folder import load_hf_folder
from inference.loading.model_form import LoadedModel, ModelLoadError, resolve_weights, return_freed_memory

__all__ = ["LoadedModel", "ModelLoadError", "load_model", "resolve_weights"]


def load_model(
    path: str | Path,
    device: str = "auto",
    dtype: torch.dtype | None = None,
    *,
    memory_limit_bytes: int | None = None,
    weights: str | None = None,
) -> LoadedModel:
    """Load the model at `path` (a Hugging Face folder or a GGUF file) onto `device` (auto|cpu|cuda) in
    `dtype` (default per device).

    memory_limit_bytes: memory the weights may use (default: what the device has free); a checkpoint
    that needs more is refused before anything is loaded.
    weights: float32 | float16 | q4_1 | q4_1_q8, how the projections are stored for serving on the CPU (see
    `inference.layers.linear`; the packed forms need the CPU and float32); auto: the CPU default (see
    `resolve_weights`); None keeps the checkpoint's own layout (plain `nn.Linear`s), for code that
    reads the weights.
    """
    location = Path(path).expanduser()
    if location.is_file() or location.suffix.lower() == ".gguf":
        from inference.loading.gguf_file import load_gguf_model  # the gguf package loads only for GGUF

        loaded = load_gguf_model(
            location, device, dtype, memory_limit_bytes=memory_limit_bytes, weights=weights
        )
    else:
        loaded = load_hf_folder(
            location, device, dtype, memory_limit_bytes=memory_limit_bytes, weights=weights
        )
    # What the reader built and dropped (the file's metadata, the tokenizer's merges, float sources of
    # packed weights) is free now; glibc would keep it resident (Gemma 3: 36 MB).
    return_freed_memory()
    return loaded
