"""Tokenizers rebuilt from GGUF metadata against transformers' own GGUF tokenizer, and the special
tokens and ids a file names."""

from __future__ import annotations

from pathlib import Path

import pytest

from inference.loading.gguf_metadata import GGUFFile
from inference.loading.gguf_tokenizer import gguf_tokenizer
from tests.fixtures.tiny_gguf import write_gguf, write_sentencepiece_gguf
from tests.fixtures.tiny_models import corpus_texts, make_tiny_checkpoint

transformers = pytest.importorskip("transformers")

TEXTS = [
    "def f(x):\n    return x ** 2  # 12345 squared\n",
    "naïve café 😀 ünïcødé\tand tabs\r\n",
    "</s>hello<s> world",
    corpus_texts()[1][:2000],
]


def test_sentencepiece_vocabulary_tokenizes_as_transformers_does(tmp_path: Path) -> None:
    path = write_sentencepiece_gguf(tmp_path / "sp.gguf")
    ours = gguf_tokenizer(GGUFFile(path))
    theirs = transformers.AutoTokenizer.from_pretrained(str(tmp_path), gguf_file=path.name)
    for text in [*TEXTS, "  two leading spaces"]:
        ids = ours.encode(text)
        assert ids == theirs(text, add_special_tokens=False)["input_ids"], text
        assert ours.decode(ids) == theirs.decode(ids)
    for text in TEXTS:
        assert ours.decode(ours.encode(text)) == text
    # Characters outside the vocabulary fall back to their UTF-8 bytes, not <unk>.
    assert ours.id_to_token(ours.encode("😀")[-1]) == "<0x80>"
    assert ours.bos_token == "<s>" and ours.config["add_bos_token"] is True
    assert ours.eos_token_ids == frozenset({2})
    assert ours.special_tokens == frozenset({"<s>", "</s>"})
    assert ours.encode("hi", add_bos=True)[0] == 1


def test_the_named_pre_tokenizer_decides_how_digits_split(tmp_path: Path) -> None:
    """llama.cpp's `smollm` (StarCoder-style) rules put every digit in a piece of its own; `gpt2`'s
    keep runs of digits together, so merges like "00" apply."""
    checkpoint = make_tiny_checkpoint(tmp_path / "ckpt")
    tokens = {}
    for pre in ("gpt2", "smollm"):
        write_gguf(checkpoint, tmp_path / f"{pre}.gguf", pre=pre)
        tokenizer = gguf_tokenizer(GGUFFile(tmp_path / f"{pre}.gguf"))
        ids = tokenizer.encode("x = 100000")
        assert tokenizer.decode(ids) == "x = 100000"
        tokens[pre] = [tokenizer.id_to_token(i) for i in ids]
    assert tokens["gpt2"] == ["x", "Ġ=", "Ġ100", "00", "0"]
    assert tokens["smollm"] == ["x", "Ġ=", "Ġ", "1", "0", "0", "0", "0", "0"]
