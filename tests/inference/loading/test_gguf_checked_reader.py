"""`CheckedReader` reads the same fields and tensors as `gguf.GGUFReader`, faster."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
import pytest
from gguf import GGMLQuantizationType as Q
from gguf import GGUFValueType

from inference.loading.gguf_checked_reader import CheckedReader, PackedArrayField, array_length
from tests.fixtures.tiny_gguf import write_gguf
from tests.fixtures.tiny_models import make_tiny_checkpoint


def test_fields_and_tensors_equal_the_gguf_readers(tmp_path: Path) -> None:
    checkpoint = make_tiny_checkpoint(tmp_path / "llama", "llama")
    write_gguf(checkpoint, tmp_path / "model.gguf", Q.Q8_0)
    theirs, ours = gguf.GGUFReader(tmp_path / "model.gguf"), CheckedReader(tmp_path / "model.gguf")
    assert list(ours.fields) == list(theirs.fields)
    packed = {name for name, field in ours.fields.items() if isinstance(field, PackedArrayField)}
    arrays = {name for name, field in theirs.fields.items() if field.types[0] == GGUFValueType.ARRAY}
    assert packed == arrays and {"tokenizer.ggml.tokens", "tokenizer.ggml.token_type"} <= packed
    long_arrays = {field.types[-1] for field in ours.fields.values() if array_length(field) > 1000}
    # the vocabulary's strings, and its token types: numbers
    assert {GGUFValueType.STRING, GGUFValueType.INT32} <= long_arrays
    for name, field in theirs.fields.items():
        mine = ours.fields[name]
        assert (mine.offset, mine.name, mine.types) == (field.offset, field.name, field.types), name
        assert mine.contents() == field.contents(), name
        assert array_length(mine) == len(field.data), name
        if name in packed:
            for index in (0, 1, -1):
                assert mine.contents(index) == field.contents(index), name
            assert mine.contents(slice(3, 9, 2)) == field.contents(slice(3, 9, 2)), name
            continue
        assert mine.data == field.data, name
        assert len(mine.parts) == len(field.parts), name
        for part, expected in zip(mine.parts, field.parts, strict=True):
            assert part.dtype == expected.dtype and np.array_equal(part, expected), name
    for a, b in zip(ours.tensors, theirs.tensors, strict=True):
        assert (a.name, a.tensor_type, a.data_offset) == (b.name, b.tensor_type, b.data_offset)
        assert np.array_equal(a.data, b.data)


@pytest.mark.parametrize("key", ["tokenizer.ggml.tokens", "tokenizer.ggml.token_type"])
def test_an_array_longer_than_the_file_is_refused(tmp_path: Path, key: str) -> None:
    checkpoint = make_tiny_checkpoint(tmp_path / "llama", "llama")
    write_gguf(checkpoint, tmp_path / "model.gguf", Q.Q8_0)
    field = CheckedReader(tmp_path / "model.gguf").fields[key]
    # The item count follows the key (its 8-byte length and bytes), the value type and the item type.
    count_at = field.offset + 8 + len(key) + 4 + 4
    data = bytearray((tmp_path / "model.gguf").read_bytes())
    data[count_at : count_at + 8] = (2**40).to_bytes(8, "little")
    (tmp_path / "bad.gguf").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="runs past the end of the file"):
        CheckedReader(tmp_path / "bad.gguf")
