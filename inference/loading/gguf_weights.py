"""The tensors of a GGUF file as a Hugging Face state dict: renamed, dequantized by `gguf`, unpermuted."""

from __future__ import annotations

import numpy as np
import torch
from gguf import MODEL_ARCH, GGMLQuantizationType, ReaderTensor, get_tensor_name_map
from gguf.quants import dequantize

from inference.loading.gguf_metadata import GGUFFile
from inference.loading.model_form import ModelLoadError
from inference.model_config import ModelConfig
from inference.models.registry import architecture_for

# The tensor types that `gguf.quants` dequantizes and llama.cpp writes for the models we load.
SUPPORTED_TYPES = frozenset(
    GGMLQuantizationType[name]
    for name in "F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K Q4_K Q5_K Q6_K".split()
)

# Which of gguf's tensor-name tables each model_type's file uses.
_NAME_TABLES = {
    "llama": MODEL_ARCH.LLAMA,
    "mistral": MODEL_ARCH.LLAMA,
    "qwen2": MODEL_ARCH.QWEN2,
    "qwen3": MODEL_ARCH.QWEN3,
    "gemma3_text": MODEL_ARCH.GEMMA3,
}
# llama.cpp's converter permutes the q/k rows of these families (its rotary pairs adjacent
# dimensions, Hugging Face's pairs the two halves); Qwen files keep the Hugging Face order.
_PERMUTED = frozenset({"llama", "mistral"})


def check_tensor_types(file: GGUFFile) -> None:
    """Refuse a file holding a tensor type outside `SUPPORTED_TYPES`, naming the first such tensor."""
    for tensor in file.reader.tensors:
        if tensor.tensor_type not in SUPPORTED_TYPES:
            supported = ", ".join(t.name for t in sorted(SUPPORTED_TYPES))
            raise ModelLoadError(
                f"tensor {tensor.name} of {file.path.name} has type {tensor.tensor_type.name}, which "
                f"codedraft does not load (supported: {supported})"
            )


# The types whose blocks the q4_1 weights form holds exactly (`inference.layers.block_linear`).
BLOCK_FORM_TYPES = frozenset({GGMLQuantizationType.Q4_1, GGMLQuantizationType.Q8_0})


def block_quantized(file: GGUFFile) -> bool:
    """Whether every matrix of the file is stored in one of `BLOCK_FORM_TYPES`."""
    matrices = [t for t in file.reader.tensors if len(t.shape) > 1]
    return bool(matrices) and all(t.tensor_type in BLOCK_FORM_TYPES for t in matrices)


def weight_bytes(file: GGUFFile, dtype: torch.dtype) -> int:
    """Bytes the file's weights take once dequantized to `dtype`."""
    elem = torch.empty((), dtype=dtype).element_size()
    return sum(int(tensor.n_elements) for tensor in file.reader.tensors) * elem


def _hf_names(config: ModelConfig) -> dict[str, str]:
    """GGUF tensor name -> the Hugging Face name our architecture gives the same weight."""
    architecture = architecture_for(config.model_type)
    assert architecture is not None  # model_config only yields supported types
    with torch.device("meta"):
        names = list(architecture(config).state_dict())
    table = get_tensor_name_map(_NAME_TABLES[config.model_type], config.num_layers)
    mapped: dict[str, str] = {}
    for name in names:
        gguf_name = table.get_name(name, try_suffixes=(".weight", ".bias"))
        if gguf_name is not None:
            mapped[gguf_name] = name
    return mapped


def _unpermute(rows: np.ndarray, heads: int) -> np.ndarray:
    """Undo llama.cpp's q/k permutation: within each head, rows (pairs, 2) back to (2, pairs)."""
    # (heads, head_dim / 2, 2, ...) -> (heads, 2, head_dim / 2, ...)
    split = rows.reshape(heads, rows.shape[0] // heads // 2, 2, *rows.shape[1:])
    return split.swapaxes(1, 2).reshape(rows.shape)


def _values(tensor: ReaderTensor) -> np.ndarray:
    """The tensor as float32 in PyTorch's (rows, columns) order."""
    values = dequantize(tensor.data, tensor.tensor_type)
    # GGUF lists dimensions innermost first.
    return values.reshape(tuple(int(d) for d in reversed(tensor.shape.tolist())))


def read_state(
    file: GGUFFile, config: ModelConfig, device: torch.device, dtype: torch.dtype
) -> dict[str, torch.Tensor]:
    """Every tensor of the file under its Hugging Face name, dequantized to `dtype` on `device`."""
    names = _hf_names(config)
    permuted = config.model_type in _PERMUTED
    state: dict[str, torch.Tensor] = {}
    for tensor in file.reader.tensors:
        name = names.get(tensor.name)
        if name is None:
            raise ModelLoadError(
                f"tensor {tensor.name} of {file.path.name} has no place in a {config.model_type} model"
            )
        values = _values(tensor)
        if permuted and ".self_attn.q_proj." in name:
            values = _unpermute(values, config.num_heads)
        elif permuted and ".self_attn.k_proj." in name:
            values = _unpermute(values, config.num_kv_heads)
        if not (values.flags.writeable and values.flags.c_contiguous):
            values = np.array(values)  # F32 tensors arrive as read-only views of the mapped file
        state[name] = torch.from_numpy(values).to(device=device, dtype=dtype)
    return state
