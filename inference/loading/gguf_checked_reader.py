"""`gguf.GGUFReader` that names the tensor when a file's tensor table cannot be mapped, and reads the
metadata faster.

The reader maps each tensor's bytes as it lists them; a type number it does not know, a row length
its type cannot hold or a tensor running past the end of the file (a truncated download) otherwise
surface as an anonymous numpy or enum error. Checked first here, each becomes one sentence naming
the tensor, raised before any tensor is mapped, so nothing is half-loaded.

The reader takes one view of the mapped file per metadata value, about 200,000 for a 49,152-token
vocabulary; views of a `np.memmap` each run its `__array_finalize__`, so the fields are read from a
plain array over the same mapping instead, an array of strings (the vocabulary, the merges) is
walked with `struct` rather than by a call per string, and an array of numbers (the scores and token
types, 262,144 each in Gemma 3's file) is one view split into items (nothing is copied, and the
fields are the same arrays).
"""

from __future__ import annotations

import struct
from typing import Any, Literal

import gguf
import numpy as np
import numpy.typing as npt
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFValueType, ReaderField


def _problem(field: ReaderField, start: int, file_bytes: int) -> str | None:
    _name_length, name_data, _dims_count, dims, raw_type, offset = field.parts
    name = bytes(name_data).decode("utf-8", errors="replace")
    try:
        qtype = GGMLQuantizationType(int(raw_type[0]))
    except ValueError:
        return f"tensor {name} has type number {int(raw_type[0])}, which no GGUF reader knows"
    per_block, block_bytes = GGML_QUANT_SIZES[qtype]
    row = int(dims[0]) if len(dims) else 1
    if row % per_block:
        return f"tensor {name}: rows of {row} weights do not split into {qtype.name} blocks of {per_block}"
    needed = int(np.prod(dims.astype(np.int64))) // per_block * block_bytes
    present = max(0, file_bytes - (start + int(offset[0])))
    if needed > present:
        return f"tensor {name} is truncated: {present} of its {needed} bytes are in the file"
    return None


class CheckedReader(gguf.GGUFReader):
    """A `GGUFReader` whose tensor table is checked before it is mapped (raises ValueError)."""

    def _build_fields(self, offs: int, count: int) -> int:
        self.data = self.data.view(np.ndarray)  # type: ignore[assignment]  # the same mapping, no per-view cost
        return super()._build_fields(offs, count)

    def _get_field_parts(
        self, orig_offs: int, raw_type: int
    ) -> tuple[int, list[npt.NDArray[Any]], list[int], list[GGUFValueType]]:
        if raw_type != GGUFValueType.ARRAY:
            return super()._get_field_parts(orig_offs, raw_type)
        item_type, count = self._get(orig_offs, np.uint32), self._get(orig_offs + 4, np.uint64)
        number = self.gguf_scalar_to_np.get(GGUFValueType(int(item_type[0])))
        if number is not None:
            return self._numbers(orig_offs, item_type, count, number)
        if int(item_type[0]) != GGUFValueType.STRING or self.byte_order != "I":
            return super()._get_field_parts(orig_offs, raw_type)
        parts: list[npt.NDArray[Any]] = [item_type, count]
        indices: list[int] = []
        data, offset = self.data, orig_offs + 12
        view = memoryview(data)  # type: ignore[arg-type]  # an ndarray exports its buffer
        for _ in range(int(count[0])):
            (length,) = struct.unpack_from("<Q", view, offset)
            parts += (data[offset : offset + 8].view(np.uint64), data[offset + 8 : offset + 8 + length])
            indices.append(len(parts) - 1)
            offset += 8 + length
        types = [GGUFValueType.ARRAY] + ([GGUFValueType.STRING] if int(count[0]) else [])
        return offset - orig_offs, parts, indices, types

    def _numbers(
        self, orig_offs: int, item_type: npt.NDArray[Any], count: npt.NDArray[Any], number: type[np.generic]
    ) -> tuple[int, list[npt.NDArray[Any]], list[int], list[GGUFValueType]]:
        """An array of numbers (a vocabulary's scores and token types) read as one view, then split into
        the one-item views the reader gives, without a call per item."""
        items = self._get(orig_offs + 12, number, int(count[0]))
        parts: list[npt.NDArray[Any]] = [item_type, count, *items.reshape(-1, 1)]
        types = [GGUFValueType.ARRAY] + ([GGUFValueType(int(item_type[0]))] if len(items) else [])
        return 12 + int(items.nbytes), parts, list(range(2, len(parts))), types

    def _get(
        self,
        offset: int,
        dtype: npt.DTypeLike,
        count: int = 1,
        override_order: Literal["I", "S", "<"] | None = None,
    ) -> npt.NDArray[Any]:
        kind = np.dtype(dtype)
        count = int(count)
        values = self.data[offset : offset + kind.itemsize * count].view(kind)
        return values.view(kind.newbyteorder(self.byte_order if override_order is None else override_order))

    def _build_tensors(self, start_offs: int, fields: list[ReaderField]) -> None:
        for field in fields:
            problem = _problem(field, start_offs, len(self.data))
            if problem is not None:
                raise ValueError(problem)
        super()._build_tensors(start_offs, fields)
