"""`gguf.GGUFReader` that names the tensor when a file's tensor table cannot be mapped, and reads the
metadata faster.

The reader maps each tensor's bytes as it lists them; a type number it does not know, a row length
its type cannot hold or a tensor running past the end of the file (a truncated download) otherwise
surface as an anonymous numpy or enum error. Checked first here, each becomes one sentence naming
the tensor, raised before any tensor is mapped, so nothing is half-loaded.

The reader takes one numpy view of the mapped file per metadata value: about 200,000 for a 49,152-token
vocabulary, over a million for Gemma 3's 262,144 tokens with their scores and types (about 170 MB of
array objects while the file is open, and a second to build). Here an array of strings or numbers
(the vocabulary, the merges, the scores, the token types) is one `PackedArrayField` instead: the
array's bytes as one view of the mapping and, for strings, where each string starts; its items are
made when `contents()` asks for them, the same values `gguf` gives. The other fields are read from a
plain array over the same mapping (views of a `np.memmap` each run its `__array_finalize__`).
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


class PackedArrayField(ReaderField):
    """A metadata array of strings or numbers whose items are made only when read.

    `parts`: the key's three (its length, its bytes, the value type ARRAY), then the item type, the
    item count and the items' bytes as they lie in the file (numbers: the items as one array); for
    strings, then the `count + 1` offsets in those bytes where each item (its 8-byte length, then its
    UTF-8 bytes) starts and the last ends. `data` is empty (where `gguf` keeps an index into `parts`
    per item); `length` is the item count. `contents()` gives what `gguf`'s `ReaderField.contents()` gives."""

    __slots__ = ()

    @property
    def length(self) -> int:
        """The number of items."""
        return int(self.parts[_COUNT][0])

    def contents(self, index_or_slice: int | slice = slice(None)) -> Any:
        """The item at an index, or a list of the items in a slice (all by default)."""
        items = self.parts[_ITEMS]
        if len(self.parts) == _ITEMS + 1:  # numbers
            return items[index_or_slice].tolist()
        view = memoryview(items)  # type: ignore[arg-type]  # an ndarray exports its buffer
        if isinstance(index_or_slice, int):
            index = range(self.length)[index_or_slice]
            start, end = self.parts[_ITEMS + 1][index : index + 2].tolist()
            return str(view[start + 8 : end], "utf-8")
        bounds = self.parts[_ITEMS + 1].tolist()
        return [str(view[bounds[i] + 8 : bounds[i + 1]], "utf-8") for i in range(self.length)[index_or_slice]]


# Where a `PackedArrayField`'s item count and items lie in its parts.
_COUNT, _ITEMS = 4, 5


def array_length(field: ReaderField) -> int:
    """The number of items of an array field, packed or as `gguf` reads it."""
    return field.length if isinstance(field, PackedArrayField) else len(field.data)


class CheckedReader(gguf.GGUFReader):
    """A `GGUFReader` whose tensor table is checked before it is mapped (raises ValueError), and whose
    arrays of strings or numbers are `PackedArrayField`s."""

    def _build_fields(self, offs: int, count: int) -> int:
        self.data = self.data.view(np.ndarray)  # type: ignore[assignment]  # the same mapping, no per-view cost
        for _ in range(count):
            start = offs
            key_length, key = self._get_str(offs)
            offs += 8 + int(key_length[0])
            raw_type = self._get(offs, np.uint32)
            offs += 4
            head: list[npt.NDArray[Any]] = [key_length, key, raw_type]
            name = str(bytes(key), encoding="utf-8")
            packed = self._packed_array(offs) if int(raw_type[0]) == GGUFValueType.ARRAY else None
            field: ReaderField
            if packed is not None:
                size, parts, types = packed
                field = PackedArrayField(start, name, head + parts, [], types)
            else:
                size, parts, indices, types = self._get_field_parts(offs, int(raw_type[0]))
                field = ReaderField(start, name, head + parts, [i + len(head) for i in indices], types)
            self._push_field(field, skip_sum=True)
            offs += size
        return offs

    def _packed_array(self, offs: int) -> tuple[int, list[npt.NDArray[Any]], list[GGUFValueType]] | None:
        """(bytes, parts after the key's, types) of the array at `offs` when it is one of numbers or of
        strings (little-endian files), else None (`gguf` reads it)."""
        item_type, count = self._get(offs, np.uint32), self._get(offs + 4, np.uint64)
        items_count = int(count[0])
        if items_count > len(self.data) - offs - 12:  # every item takes a byte at least
            raise ValueError(f"an array of {items_count} items runs past the end of the file")
        types = [GGUFValueType.ARRAY] + ([GGUFValueType(int(item_type[0]))] if items_count else [])
        number = self.gguf_scalar_to_np.get(GGUFValueType(int(item_type[0])))
        if number is not None:
            items = self._get(offs + 12, number, items_count)
            if len(items) != items_count:
                raise ValueError(f"an array of {items_count} numbers runs past the end of the file")
            return 12 + int(items.nbytes), [item_type, count, items], types
        if int(item_type[0]) != GGUFValueType.STRING or self.byte_order != "I":
            return None
        view = memoryview(self.data)  # type: ignore[arg-type]  # an ndarray exports its buffer
        first = position = offs + 12
        bounds = [0] * (items_count + 1)
        for index in range(items_count):
            (length,) = struct.unpack_from("<Q", view, position)
            position += 8 + length
            bounds[index + 1] = position - first
        if position > len(self.data):
            raise ValueError(f"an array of {items_count} strings runs past the end of the file")
        items = self.data[first:position]
        return position - offs, [item_type, count, items, np.array(bounds, dtype=np.int64)], types

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
