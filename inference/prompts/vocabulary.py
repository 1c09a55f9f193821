"""The bytes each token stands for, indexed so that "which tokens agree with these bytes" is cheap.

Token healing constrains the first generated tokens to reproduce text removed from the end of the
prompt. A token agrees with the text still to reproduce (`remaining`) when its bytes start with
`remaining` (it reproduces all of it and goes on) or are a non-empty prefix of it (it reproduces a
part). Bytes, not text: a byte-level BPE token may hold half of a UTF-8 character.

The index is built once per tokenizer and shared, since building it walks the whole vocabulary:
the tokens sorted by their bytes make "starts with `remaining`" one contiguous slice found by
bisection, and a bisection of the same keys per length answers "is a prefix of `remaining`"
(figures: docs/benchmarks.md).
"""

from __future__ import annotations

import bisect
import functools
import re
import threading
import weakref
from array import array
from collections.abc import Container, Sequence
from typing import Any, overload

import torch

from inference.tokenizer import Tokenizer

_BYTE_FALLBACK = re.compile(r"<0x([0-9A-Fa-f]{2})>")


@functools.cache
def _byte_level_alphabet() -> dict[str, int]:
    """GPT-2's printable stand-in character of every byte, reversed: stand-in -> byte value."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    chars = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + extra)
            extra += 1
    return {c: b for b, c in chars.items()}


def _is_byte_level(spec: dict[str, Any]) -> bool:
    if spec.get("type") == "ByteLevel":
        return True
    return any(_is_byte_level(d) for d in spec.get("decoders", []) if isinstance(d, dict))


def _token_bytes(raw: str, byte_level: bool) -> bytes:
    if byte_level:
        alphabet = _byte_level_alphabet()
        if all(c in alphabet for c in raw):
            return bytes(alphabet[c] for c in raw)
        return raw.encode("utf-8")
    fallback = _BYTE_FALLBACK.fullmatch(raw)
    if fallback:
        return bytes([int(fallback.group(1), 16)])
    return raw.replace("▁", " ").encode("utf-8")


class _Keys(Sequence[bytes]):
    """Byte strings laid end to end in one `bytes` (`data`, the i-th from `bounds[i]` to
    `bounds[i + 1]`): a list of them without an object a string (bisect reads it as a list)."""

    def __init__(self, data: bytes, bounds: array[int]) -> None:
        self.data, self.bounds = data, bounds

    def __len__(self) -> int:
        return len(self.bounds) - 1

    @overload
    def __getitem__(self, i: int) -> bytes: ...
    @overload
    def __getitem__(self, i: slice) -> list[bytes]: ...
    def __getitem__(self, i: int | slice) -> bytes | list[bytes]:
        if isinstance(i, slice):
            return [self[j] for j in range(len(self))[i]]
        i = range(len(self))[i]  # negative indexes, and IndexError past the end
        return self.data[self.bounds[i] : self.bounds[i + 1]]


class _TokenBytes(Sequence[bytes | None]):
    """Token id -> its bytes (None: no text), read from the distinct byte strings (`keys`) through
    each id's key number (`key_of`, -1: none)."""

    def __init__(self, keys: _Keys, key_of: array[int]) -> None:
        self.keys, self.key_of = keys, key_of

    def __len__(self) -> int:
        return len(self.key_of)

    @overload
    def __getitem__(self, i: int) -> bytes | None: ...
    @overload
    def __getitem__(self, i: slice) -> list[bytes | None]: ...
    def __getitem__(self, i: int | slice) -> bytes | list[bytes | None] | None:
        if isinstance(i, slice):
            return [self[j] for j in range(len(self))[i]]
        key = self.key_of[i]
        return None if key < 0 else self.keys[key]


class VocabularyIndex:
    """Token id -> bytes for one tokenizer, and the ids that agree with a byte string.

    Special tokens (FIM markers, end of text, chat markers) have no bytes: they never agree with text.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        byte_level = _is_byte_level(tokenizer.decoder_spec())
        special = {tokenizer.token_id(t) for t in tokenizer.special_tokens}
        self.size = tokenizer.vocab_size
        token_bytes = [
            None if raw is None or token_id in special else _token_bytes(raw, byte_level) or None
            for token_id, raw in enumerate(tokenizer.vocabulary())
        ]
        # Ids in the order of their bytes (ids of equal bytes in id order), then each distinct byte
        # string (`_sorted_keys`) with where its ids start in that order (`_starts`, one more at the
        # end), and each id's key: flat arrays and one `bytes` of the keys, found by bisection, not a
        # dict of a list of ids a key nor an object a token's bytes (for Gemma 3's 262,144 tokens
        # 65 MB, then 23 MB as lists of `bytes`, now 7 MB).
        text_ids = [token_id for token_id, data in enumerate(token_bytes) if data]
        texts = [data for data in token_bytes if data]
        # Sorted by key alone (a stable sort: equal bytes keep id order), 4x faster than (bytes, id) pairs.
        order = sorted(range(len(texts)), key=texts.__getitem__)
        keys: list[bytes] = []
        self._starts = array("i")
        key_of = array("i", [-1]) * self.size
        for position, text in enumerate(order):
            data = texts[text]
            if not keys or data != keys[-1]:
                keys.append(data)
                self._starts.append(position)
            key_of[text_ids[text]] = len(keys) - 1
        self._starts.append(len(order))
        bounds = array("i", [0])
        for data in keys:
            bounds.append(bounds[-1] + len(data))
        self._sorted_keys = _Keys(b"".join(keys), bounds)
        self.token_bytes = _TokenBytes(self._sorted_keys, key_of)
        self._sorted_ids = torch.tensor([text_ids[text] for text in order], dtype=torch.long)

    def _ids_of(self, data: bytes) -> list[int]:
        """The ids whose bytes are exactly `data`, in id order (empty: none)."""
        key = bisect.bisect_left(self._sorted_keys, data)
        if key == len(self._sorted_keys) or self._sorted_keys[key] != data:
            return []
        return self._sorted_ids[self._starts[key] : self._starts[key + 1]].tolist()

    def is_text(self, token_id: int) -> bool:
        """Whether the token stands for text (not a special token, not outside the vocabulary)."""
        return 0 <= token_id < self.size and self.token_bytes.key_of[token_id] >= 0

    def bytes_of(self, token_ids: list[int]) -> bytes:
        """The bytes the tokens stand for (special tokens contribute nothing)."""
        return b"".join(self.token_bytes[i] or b"" for i in token_ids if 0 <= i < self.size)

    def starting_with(self, prefix: bytes) -> torch.Tensor:
        """Ids of the tokens whose bytes start with `prefix` (all text tokens for b""), a long tensor."""
        keys = self._sorted_keys
        lo = bisect.bisect_left(keys, prefix)
        # Keys starting with `prefix` sort together right after it; bisect to the end of that run.
        upper = _successor(prefix)
        hi = len(keys) if upper is None else bisect.bisect_left(keys, upper)
        return self._sorted_ids[self._starts[lo] : self._starts[hi]]

    def agreeing_ids(
        self, remaining: bytes, not_then: bytes = b"", ends: Container[int] | None = None
    ) -> torch.Tensor:
        """Ids of the tokens that agree with `remaining` (see the module docstring), as a long tensor;
        without those that go on past it with one of the bytes of `not_then`, and, when `ends` is
        given, without those that end inside it other than at one of the byte counts in `ends`."""
        longer = self.starting_with(remaining)
        if not_then:
            barred = torch.cat([self.starting_with(remaining + bytes([b])) for b in not_then])
            longer = longer[~torch.isin(longer, barred)]
        shorter = [
            i
            for n in range(1, len(remaining))
            if ends is None or n in ends
            for i in self._ids_of(remaining[:n])
        ]
        if not shorter:
            return longer
        return torch.cat([longer, torch.tensor(shorter, dtype=torch.long)])

    def remaining_after(self, remaining: bytes, token_ids: list[int]) -> bytes | None:
        """What is left of `remaining` to reproduce after these tokens, or None when one disagrees."""
        for token_id in token_ids:
            if not remaining:
                return b""
            data = self.token_bytes[token_id] if 0 <= token_id < self.size else None
            if not data:
                return None
            if data.startswith(remaining):
                remaining = b""
            elif remaining.startswith(data):
                remaining = remaining[len(data) :]
            else:
                return None
        return remaining


def _successor(prefix: bytes) -> bytes | None:
    """The smallest byte string greater than every string that starts with `prefix` (None: none is)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes([stripped[-1] + 1])


_INDEXES: weakref.WeakKeyDictionary[Tokenizer, VocabularyIndex] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def vocabulary_index(tokenizer: Tokenizer) -> VocabularyIndex:
    """The tokenizer's index, built on first use and shared by every later caller (thread-safe)."""
    with _LOCK:
        index = _INDEXES.get(tokenizer)
        if index is None:
            index = _INDEXES[tokenizer] = VocabularyIndex(tokenizer)
        return index
