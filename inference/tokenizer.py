"""`Tokenizer` over a Hugging Face `tokenizer.json`, and an `IncrementalDecoder` for streaming text."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer as HFTokenizer

REPLACEMENT_CHAR = "\ufffd"


def _token_text(value: Any) -> str | None:
    """tokenizer_config.json spells special tokens as a string or as {"content": ...}."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None


class Tokenizer:
    """A `tokenizers.Tokenizer` plus the special-token facts from tokenizer_config.json.

    `encode` never adds BOS unless asked, and recognises special tokens written in the text (FIM
    prompts are built as text with special tokens in them).
    """

    def __init__(
        self, tokenizer: HFTokenizer, config: dict[str, Any] | None = None, extra_eos_ids: Iterable[int] = ()
    ) -> None:
        self._tok = tokenizer
        self.config: dict[str, Any] = dict(config or {})
        self.special_tokens: frozenset[str] = frozenset(
            t.content for t in tokenizer.get_added_tokens_decoder().values() if t.special
        )
        eos_ids = set(extra_eos_ids)
        eos_text = _token_text(self.config.get("eos_token"))
        if eos_text is not None and (eos_id := self.token_id(eos_text)) is not None:
            eos_ids.add(eos_id)
        self.eos_token_ids: frozenset[int] = frozenset(eos_ids)
        self.eos_token: str | None = eos_text
        self.bos_token: str | None = _token_text(self.config.get("bos_token"))
        self.bos_token_id: int | None = self.token_id(self.bos_token) if self.bos_token else None

    @classmethod
    def from_dir(cls, path: str | Path, extra_eos_ids: Iterable[int] = ()) -> Tokenizer:
        """Load tokenizer.json (required), tokenizer_config.json and chat_template.jinja (optional) from a
        model directory."""
        directory = Path(path)
        tok = HFTokenizer.from_file(str(directory / "tokenizer.json"))
        config_path = directory / "tokenizer_config.json"
        config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.exists() else {}
        # Current transformers writes the chat template to its own file, not into tokenizer_config.json.
        template_path = directory / "chat_template.jinja"
        if "chat_template" not in config and template_path.is_file():
            config["chat_template"] = template_path.read_text(encoding="utf-8")
        return cls(tok, config, extra_eos_ids)

    @property
    def vocab_size(self) -> int:
        """Number of token ids, added tokens included."""
        return int(self._tok.get_vocab_size(with_added_tokens=True))

    def encode(self, text: str, add_bos: bool = False) -> list[int]:
        """Token ids of `text`; special tokens written in the text become their ids."""
        ids = list(self._tok.encode(text, add_special_tokens=False).ids)
        if add_bos and self.bos_token_id is not None:
            ids.insert(0, self.bos_token_id)
        return ids

    def escape_special(self, text: str) -> str:
        """``text`` with every special token written in it broken up by a zero-width space after its
        first character, so that text from a user's files is never read as a control token (a file
        that mentions ``<|endoftext|>`` must not end the prompt)."""
        for token in self.special_tokens:
            if token in text:
                text = text.replace(token, f"{token[0]}\u200b{token[1:]}")
        return text

    def unescape_special(self, text: str) -> str:
        """The inverse of :meth:`escape_special`: model output that copied escaped client text (a
        rewritten region) gets the client's special-token text back."""
        for token in self.special_tokens:
            escaped = f"{token[0]}\u200b{token[1:]}"
            if escaped in text:
                text = text.replace(escaped, token)
        return text

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        """Text of `ids` (special tokens kept unless asked otherwise)."""
        return str(self._tok.decode(list(ids), skip_special_tokens=skip_special_tokens))

    def token_id(self, special: str) -> int | None:
        """Id of a token given by its exact text (e.g. "<|fim_prefix|>"), or None when absent."""
        token_id = self._tok.token_to_id(special)
        return None if token_id is None else int(token_id)

    def id_to_token(self, token_id: int) -> str | None:
        """Raw vocabulary string of an id."""
        return self._tok.id_to_token(token_id)

    def vocabulary(self) -> list[str | None]:
        """The raw vocabulary string of every id below `vocab_size` (None: an id without one), as
        `id_to_token` gives each."""
        return list(map(self._tok.id_to_token, range(self.vocab_size)))

    # Vocabulary access for constrained decoding: token healing builds its byte index from these.

    def decoder_spec(self) -> dict[str, Any]:
        """The `decoder` entry of tokenizer.json ({} when there is none): how token strings map to
        bytes (byte-level BPE, or SentencePiece's "▁" and <0xNN> byte fallback)."""
        decoder = self._tok.decoder
        if decoder is None:
            return {}
        # The decoder's own JSON (what pickling it writes), the same as its entry in tokenizer.json;
        # serializing the whole tokenizer for it took 2 s for a 262,144-token vocabulary.
        spec = json.loads(decoder.__getstate__())
        return spec if isinstance(spec, dict) else {}

    def pre_token_starts(self, text: str) -> list[int]:
        """Character offsets in `text` where the tokenizer's pre-tokenizer starts a piece (no token
        crosses them; [] when the tokenizer has no pre-tokenizer)."""
        pre = self._tok.pre_tokenizer
        if pre is None:
            return []
        return [start for _, (start, _end) in pre.pre_tokenize_str(text)]

    def leading_special_ids(self) -> list[int]:
        """Ids the tokenizer itself puts before every text (its post-processor's BOS, if any)."""
        ids = list(self._tok.encode("a", add_special_tokens=True).ids)
        plain = self.encode("a")
        return ids[: ids.index(plain[0])] if plain and plain[0] in ids else []

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, like `encode` (no BOS), in one call."""
        return [list(e.ids) for e in self._tok.encode_batch(list(texts), add_special_tokens=False)]


class IncrementalDecoder:
    """Turns a stream of token ids into text deltas that never split a UTF-8 character.

    Invariant: `read_offset` always sits on a character boundary, and the text of
    ids[prefix_offset:read_offset] has been emitted; a new delta is the text of
    ids[prefix_offset:] past that, held back while it ends in an incomplete character (U+FFFD).
    Decoding a small window instead of everything keeps each push O(1); the concatenated deltas
    (plus `flush()`) equal `decode(all_ids)`.
    """

    def __init__(self, tokenizer: Tokenizer, skip_special_tokens: bool = False) -> None:
        self._tok = tokenizer
        self._skip = skip_special_tokens
        self.ids: list[int] = []
        self._prefix_offset = 0
        self._read_offset = 0

    def push(self, token_id: int) -> str:
        """Add one token; return the newly completed text ("" while a character is incomplete)."""
        self.ids.append(token_id)
        prefix_text = self._tok.decode(self.ids[self._prefix_offset : self._read_offset], self._skip)
        new_text = self._tok.decode(self.ids[self._prefix_offset :], self._skip)
        if new_text.endswith(REPLACEMENT_CHAR) or len(new_text) <= len(prefix_text):
            return ""
        self._prefix_offset = self._read_offset
        self._read_offset = len(self.ids)
        return new_text[len(prefix_text) :]

    def flush(self) -> str:
        """Text still held back (an incomplete character decodes as U+FFFD); resets the hold."""
        if self._read_offset == len(self.ids):
            return ""
        prefix_text = self._tok.decode(self.ids[self._prefix_offset : self._read_offset], self._skip)
        new_text = self._tok.decode(self.ids[self._prefix_offset :], self._skip)
        self._prefix_offset = self._read_offset
        self._read_offset = len(self.ids)
        return new_text[len(prefix_text) :]
