"""The tensors of a GGUF file as a Hugging Face state dict: renamed, dequantized by `gguf`, unpermuted;
or, for the native weights form, each matrix in a kernel's block type left in its blocks where the
file's memory map holds them (`read_native_state`)."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import torch
from gguf import GGML_QUANT_SIZES, MODEL_ARCH, GGMLQuantizationType, ReaderTensor, get_tensor_name_map
from gguf.quants import dequantize

from inference.layers.gguf_linear import KERNEL_TYPES, BlockMatrix
from inference.loading.gguf_metadata import GGUFFile
from inference.loading.model_form import ModelLoadError
from inference.model_config import ModelConfig
from inference.models.registry import architecture_for

log = logging.getLogger(__name__)

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
    """Whether every matrix of the file is stored in one of `BLOCK_FORM_TYPES`, one at least in Q4_1:
    the files `auto` serves as `q4_1`. A file all in Q8_0, which `q4_1` also holds exactly, is left to
    `native_q8` (its repacked Q8_0 products are faster, and greedy agreement with float32 and with
    llama.cpp was measured as high as for the files `native_q8` already served: docs/models.md)."""
    types = {t.tensor_type for t in file.reader.tensors if len(t.shape) > 1}
    return GGMLQuantizationType.Q4_1 in types and types <= BLOCK_FORM_TYPES


def has_kernel_blocks(file: GGUFFile) -> bool:
    """Whether a matrix of the file is stored in a block type the native form's kernels read."""
    return any(len(t.shape) > 1 and t.tensor_type in KERNEL_TYPES for t in file.reader.tensors)


def weight_bytes(file: GGUFFile, dtype: torch.dtype, native: bool = False) -> int:
    """Bytes the file's weights take once dequantized to `dtype`; `native`: matrices in a kernel's
    block type stay in the file's pages, counted at their own size."""
    elem = torch.empty((), dtype=dtype).element_size()
    total = 0
    for tensor in file.reader.tensors:
        kept = native and len(tensor.shape) > 1 and tensor.tensor_type in KERNEL_TYPES
        total += int(tensor.n_bytes) if kept else int(tensor.n_elements) * elem
    return total


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


def _placed(file: GGUFFile, config: ModelConfig) -> list[tuple[ReaderTensor, str, int | None]]:
    """Each tensor with its Hugging Face name and, for llama.cpp's permuted q/k rows, the head count
    to unpermute by (None: kept in order)."""
    names = _hf_names(config)
    permuted = config.model_type in _PERMUTED
    placed: list[tuple[ReaderTensor, str, int | None]] = []
    for tensor in file.reader.tensors:
        name = names.get(tensor.name)
        if name is None:
            raise ModelLoadError(
                f"tensor {tensor.name} of {file.path.name} has no place in a {config.model_type} model"
            )
        heads = None
        if permuted and ".self_attn.q_proj." in name:
            heads = config.num_heads
        elif permuted and ".self_attn.k_proj." in name:
            heads = config.num_kv_heads
        placed.append((tensor, name, heads))
    return placed


def _float_tensor(
    tensor: ReaderTensor, heads: int | None, device: torch.device, dtype: torch.dtype
) -> torch.Tensor:
    values = _values(tensor)
    if heads is not None:
        values = _unpermute(values, heads)
    if not (values.flags.writeable and values.flags.c_contiguous):
        values = np.array(values)  # F32 tensors arrive as read-only views of the mapped file
    return torch.from_numpy(values).to(device=device, dtype=dtype)


def read_state(
    file: GGUFFile, config: ModelConfig, device: torch.device, dtype: torch.dtype
) -> dict[str, torch.Tensor]:
    """Every tensor of the file under its Hugging Face name, dequantized to `dtype` on `device`."""
    return {
        name: _float_tensor(tensor, heads, device, dtype) for tensor, name, heads in _placed(file, config)
    }


# Byte offsets of each block type's float16 factors (scales, minimums) within a block.
_FACTOR_OFFSETS = {
    GGMLQuantizationType.Q4_0: (0,),
    GGMLQuantizationType.Q4_1: (0, 2),
    GGMLQuantizationType.Q5_0: (0,),
    GGMLQuantizationType.Q5_1: (0, 2),
    GGMLQuantizationType.Q8_0: (0,),
    GGMLQuantizationType.Q4_K: (0, 2),
    GGMLQuantizationType.Q5_K: (0, 2),
    GGMLQuantizationType.Q6_K: (208,),
}


def _block_matrix(file: GGUFFile, tensor: ReaderTensor, heads: int | None) -> BlockMatrix:
    """The tensor's blocks as they lie in the mapped file (q/k: whole rows of blocks reordered, which
    is exact as rows are independent), every factor checked finite (`CheckedReader` has checked the
    rows split into blocks and every byte is in the file)."""
    qtype = GGMLQuantizationType(tensor.tensor_type)
    values_per_block, block_bytes = GGML_QUANT_SIZES[qtype]
    columns, rows = (int(d) for d in tensor.shape[:2])
    data = tensor.data.reshape(rows, columns // values_per_block * block_bytes)  # CheckedReader: all there
    blocks = data.reshape(-1, block_bytes)
    for offset in _FACTOR_OFFSETS[qtype]:
        factors = np.ascontiguousarray(blocks[:, offset : offset + 2]).view(np.float16)
        if not np.isfinite(factors).all():
            where = f"tensor {tensor.name} of {file.path.name}"
            raise ModelLoadError(f"{where} is corrupt: a {qtype.name} block has a non-finite scale")
    if heads is not None:
        data = np.ascontiguousarray(_unpermute(data, heads))
    with warnings.catch_warnings():  # the mapping is read-only, and the kernels only read it
        warnings.simplefilter("ignore", UserWarning)
        return BlockMatrix(qtype, torch.from_numpy(data), columns)


def read_native_state(
    file: GGUFFile, config: ModelConfig
) -> tuple[dict[str, torch.Tensor], dict[str, BlockMatrix]]:
    """The native form's weights: (float32 tensors under their Hugging Face names, matrices in a
    kernel's block type as `BlockMatrix`es). A quantized matrix in a type without a kernel is
    dequantized (the exact, slower way) and named in the log."""
    state: dict[str, torch.Tensor] = {}
    blocks: dict[str, BlockMatrix] = {}
    cpu = torch.device("cpu")
    for tensor, name, heads in _placed(file, config):
        if len(tensor.shape) > 1 and tensor.tensor_type in KERNEL_TYPES:
            blocks[name] = _block_matrix(file, tensor, heads)
            continue
        if len(tensor.shape) > 1 and tensor.tensor_type not in _FLOAT_TYPES:
            log.warning(
                "%s: tensor %s is %s, which has no kernel: served dequantized to float32 (exact, slower)",
                file.path.name, tensor.name, tensor.tensor_type.name,
            )  # fmt: skip
        state[name] = _float_tensor(tensor, heads, cpu, torch.float32)
    return state, blocks


_FLOAT_TYPES = frozenset({GGMLQuantizationType.F32, GGMLQuantizationType.F16, GGMLQuantizationType.BF16})
