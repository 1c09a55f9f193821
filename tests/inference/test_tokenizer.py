"""Tokenizer wrapper and streaming decode over the tiny byte-level BPE."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inference.loading.gguf_metadata import GGUFFile
from inference.loading.gguf_tokenizer import gguf_tokenizer
from inference.tokenizer import IncrementalDecoder, Tokenizer
from tests.fixtures.tiny_gguf import write_sentencepiece_gguf
from tests.fixtures.tiny_models import TOKENIZER_VOCAB_SIZE, special_token_id, write_tokenizer

MIXED = "def größe(x):  # 数据 ✓ 🐍🎉 naïve — 𝔘𝔫𝔦𝔠𝔬𝔡𝔢\n    return '日本語' + \"👍🏽\"\n"


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Tokenizer:
    return Tokenizer.from_dir(write_tokenizer(tmp_path_factory.mktemp("tok")))


def test_round_trip_and_specials(tokenizer: Tokenizer) -> None:
    ids = tokenizer.encode(MIXED)
    assert tokenizer.decode(ids) == MIXED
    assert tokenizer.vocab_size == TOKENIZER_VOCAB_SIZE
    fim_prefix = special_token_id("<|fim_prefix|>")
    assert tokenizer.token_id("<|fim_prefix|>") == fim_prefix
    assert tokenizer.token_id("<|no_such_token|>") is None
    # Special tokens written in text are recognised as single ids.
    encoded = tokenizer.encode("<|fim_prefix|>x = 1<|fim_middle|>")
    assert encoded[0] == fim_prefix and encoded[-1] == special_token_id("<|fim_middle|>")
    assert tokenizer.eos_token_ids == frozenset({special_token_id("<|endoftext|>")})
    assert tokenizer.bos_token_id is None
    assert tokenizer.encode("x", add_bos=True) == tokenizer.encode("x")  # no BOS token to add


def test_bos_only_when_asked(tmp_path: Path) -> None:
    tok = Tokenizer.from_dir(write_tokenizer(tmp_path, bos_token="<|file_sep|>"))
    bos = special_token_id("<|file_sep|>")
    assert tok.bos_token_id == bos
    assert tok.encode("abc")[0] != bos
    assert tok.encode("abc", add_bos=True) == [bos, *tok.encode("abc")]


def test_emoji_and_cjk_are_split_across_byte_tokens(tokenizer: Tokenizer) -> None:
    # Otherwise the streaming test below would not exercise held-back bytes.
    pieces = [tokenizer.decode([i]) for i in tokenizer.encode("🐍数")]
    assert any("\ufffd" in piece for piece in pieces)


def test_incremental_decoder_never_breaks_a_character(tokenizer: Tokenizer) -> None:
    ids = tokenizer.encode(MIXED)
    decoder = IncrementalDecoder(tokenizer)
    deltas = [decoder.push(i) for i in ids]
    deltas.append(decoder.flush())
    assert all("\ufffd" not in delta for delta in deltas)
    assert "".join(deltas) == tokenizer.decode(ids) == MIXED
    # Some pushes must have been held back (a multi-byte character spanning tokens).
    assert "" in deltas[:-1]


def test_incremental_decoder_with_special_tokens(tokenizer: Tokenizer) -> None:
    ids = tokenizer.encode("<|fim_suffix|>é<|fim_middle|>ok<|endoftext|>")
    decoder = IncrementalDecoder(tokenizer)
    text = "".join(decoder.push(i) for i in ids) + decoder.flush()
    assert text == tokenizer.decode(ids)
    skipping = IncrementalDecoder(tokenizer, skip_special_tokens=True)
    assert "".join(skipping.push(i) for i in ids) + skipping.flush() == "éok"


def test_flush_releases_an_incomplete_character(tokenizer: Tokenizer) -> None:
    ids = tokenizer.encode("a🐍")
    decoder = IncrementalDecoder(tokenizer)
    streamed = "".join(decoder.push(i) for i in ids[:-1])  # stop in the middle of the emoji
    tail = decoder.flush()
    assert streamed == "a"
    assert tail == tokenizer.decode(ids[:-1])[1:] and tail.endswith("\ufffd")
    assert decoder.flush() == ""


def test_escaped_special_tokens_are_plain_text(tmp_path: Path) -> None:
    tokenizer = Tokenizer.from_dir(write_tokenizer(tmp_path))
    text = "marker = '<|endoftext|>' + '<|fim_middle|>'"
    eos, middle = special_token_id("<|endoftext|>"), special_token_id("<|fim_middle|>")
    assert eos in tokenizer.encode(text) and middle in tokenizer.encode(text)
    escaped = tokenizer.escape_special(text)
    ids = tokenizer.encode(escaped)
    assert eos not in ids and middle not in ids
    assert tokenizer.decode(ids).replace("\u200b", "") == text
    assert tokenizer.escape_special("plain code") == "plain code"


def test_decoder_spec_is_the_decoder_entry_of_tokenizer_json(tokenizer: Tokenizer, tmp_path: Path) -> None:
    sentencepiece = gguf_tokenizer(GGUFFile(write_sentencepiece_gguf(tmp_path / "sp.gguf")))
    for tok in (tokenizer, sentencepiece):
        spec = tok.decoder_spec()
        assert spec == json.loads(tok._tok.to_str())["decoder"] and spec["type"] in ("ByteLevel", "Sequence")
    assert {d["type"] for d in sentencepiece.decoder_spec()["decoders"]} >= {"Replace", "ByteFallback"}


def test_vocabulary_lists_every_ids_token(tokenizer: Tokenizer) -> None:
    vocabulary = tokenizer.vocabulary()
    assert len(vocabulary) == tokenizer.vocab_size == TOKENIZER_VOCAB_SIZE
    assert vocabulary == [tokenizer.id_to_token(i) for i in range(tokenizer.vocab_size)]
    assert vocabulary[special_token_id("<|endoftext|>")] == "<|endoftext|>"
