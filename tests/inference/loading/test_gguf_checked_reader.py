"""`CheckedReader` reads the same fields and tensors as `gguf.GGUFReader`, faster."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import GGUFValueType

from inference.loading.gguf_checked_reader import CheckedReader
from tests.fixtures.tiny_gguf import write_gguf
from tests.fixtures.tiny_models import make_tiny_checkpoint


def test_fields_and_tensors_equal_the_gguf_readers(tmp_path: Path) -> None:
    checkpoint = make_tiny_checkpoint(tmp_path / "llama", "llama")
    write_gguf(checkpoint, tmp_path / "model.gguf", Q.Q8_0)
    theirs, ours = gguf.GGUFReader(tmp_path / "model.gguf"), CheckedReader(tmp_path / "model.gguf")
    assert list(ours.fields) == list(theirs.fields)
    long_arrays = {field.types[-1] for field in ours.fields.values() if len(field.data) > 1000}
    # the vocabulary's strings, and its token types: numbers
    assert {GGUFValueType.STRING, GGUFValueType.INT32} <= long_arrays
    for name, field in theirs.fields.items():
        mine = ours.fields[name]
        assert (mine.offset, mine.data, mine.types) == (field.offset, field.data, field.types), name
        assert len(mine.parts) == len(field.parts), name
        for a, b in zip(mine.parts, field.parts, strict=True):
            assert a.dtype == b.dtype and np.array_equal(a, b), name
    for a, b in zip(ours.tensors, theirs.tensors, strict=True):
        assert (a.name, a.tensor_type, a.data_offset) == (b.name, b.tensor_type, b.data_offset)
        assert np.array_equal(a.data, b.data)
