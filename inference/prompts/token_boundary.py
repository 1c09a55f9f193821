"""Token healing at the cursor: back the prompt off to a token boundary that later text cannot move.

A prompt that ends at the cursor usually ends inside a token the tokenizer would merge with what
comes next: a newline and the next line's indentation are one token, so is half an identifier or
half an operator. A model never saw such a boundary in training and answers with an extra space or
line. `heal_prompt` drops the prompt's last tokens back to the last boundary that no continuation
moves, and returns the bytes it dropped; the engine then constrains the first generated tokens to
reproduce them (`inference.engine.healing_constraint`) and strips them from the streamed text, so the
suggestion starts exactly at the cursor.

"No continuation moves it" is decided twice, and the earlier boundary wins: the tokenizer's last
pre-token (a word, a number, a run of operators or of blanks) may grow into a different token with
any continuation (`retu` + `rn`), so its tokens always go (with a SentencePiece tokenizer, which
does not cut its text into pieces, the last word); and the tail is tokenized again with each
of a set of likely next characters appended, and a token is kept only when every probe keeps it
(this also covers tokenizers without a pre-tokenizer).
Only text after the last special token is considered: a special token is a boundary by definition
(a FIM prompt that ends with its middle token needs no healing). The kept tokens are the same while
the user types on, so the KV prefix cache keeps them.

`token_boundaries` says where inside the removed text a generated token may end: only where the
tokenizer itself splits that text followed by a likely continuation. A vocabulary holds many tokens
that are a prefix of the removed text (`\n` plus three spaces, of `\n` plus eight), but a model has
only seen the ones its tokenizer writes: after `\n` and three spaces it expects a line indented by
four, and forced to retype four more spaces it goes off the rails (it writes a comment, say).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from inference.prompts.vocabulary import vocabulary_index
from inference.tokenizer import Tokenizer

# What may follow the cursor in code: letters, digits, blanks, line ends and every ASCII operator and
# bracket, plus a few pairs that merge deeper than their first character.
PROBES: tuple[str, ...] = (
    *"aZ_0 \t\n",
    *"()[]{}.,:;=+-*/%<>!&|^~'\"#@\\`$?",
    "  ",
    "\n\n",
    "==",
    "ing",
    "é",
)
# The tokens of the tail that are tokenized again; a cursor boundary moves a few tokens at most.
WINDOW_TOKENS = 24
MAX_HEALED_TOKENS = 8


@dataclass(frozen=True)
class HealedPrompt:
    """A prompt backed off to a stable boundary: `token_ids` to run, `removed` to reproduce first."""

    token_ids: list[int]
    removed: bytes = b""
    removed_tokens: int = 0


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


# The last word, run of operators or run of blanks of a text (a space may lead the first two, as
# SentencePiece's "▁" does): the piece a continuation may merge into, for a tokenizer that does not
# cut its text into pieces itself (SentencePiece: Gemma, Llama 2). At the text's very end (\Z): `$`
# also matches before a final newline, and a prompt ending a line would lose the line's last word.
_LAST_WORD = re.compile(r" ?\w+\Z| ?[^\s\w]+\Z|\s+\Z")


def _splits_words(tokenizer: Tokenizer) -> bool:
    """Whether the tokenizer's pre-tokenizer cuts text into words (byte-level BPE) rather than leaving
    it whole (SentencePiece's "▁" replacement)."""
    return len(tokenizer.pre_token_starts("a b")) > 1


def _last_piece_token(
    tokenizer: Tokenizer, text: str, window: list[int], bytes_of: Callable[[list[int]], bytes]
) -> int:
    """Index in `window` of the first token of the text's last pre-token piece (its last word when the
    tokenizer has no pre-tokenizer that cuts words)."""
    if _splits_words(tokenizer):
        starts = tokenizer.pre_token_starts(text)
        if not starts:
            return len(window)
        start = starts[-1]
    else:
        word = _LAST_WORD.search(text)
        if word is None:
            return len(window)
        start = word.start()
    piece_start = len(text[:start].encode("utf-8"))
    consumed = 0
    for i, token_id in enumerate(window):
        if consumed >= piece_start:
            return i
        consumed += len(bytes_of([token_id]))
    return len(window)


def token_boundaries(tokenizer: Tokenizer, removed: bytes) -> frozenset[int] | None:
    """Byte offsets strictly inside `removed` where the tokenizer ends a token when `removed` is
    followed by one of PROBES (see the module docstring); None when `removed` is not whole UTF-8
    characters (then no offset is ruled out).

    `removed` starts at a boundary that no continuation moves (`heal_prompt`), so it is tokenized on
    its own, as it would be after the kept prompt."""
    try:
        text = removed.decode("utf-8")
    except UnicodeDecodeError:
        return None
    index = vocabulary_index(tokenizer)
    offsets: set[int] = set()
    for probed in tokenizer.encode_batch([text + p for p in PROBES]):
        end = 0
        for token_id in probed:
            end += len(index.bytes_of([token_id]))
            if end >= len(removed):
                break
            offsets.add(end)
    return frozenset(offsets)


def heal_prompt(tokenizer: Tokenizer, token_ids: list[int]) -> HealedPrompt:
    """The prompt without its trailing tokens that later text could change (see the module docstring).

    Unchanged when the prompt ends with a special token, when its tail does not tokenize the same on
    its own (then nothing can be said about its boundaries), or when no token would be removed.
    """
    index = vocabulary_index(tokenizer)
    n = len(token_ids)
    tail_start = n
    while tail_start > 0 and index.is_text(token_ids[tail_start - 1]):
        tail_start -= 1
    for start in range(max(tail_start, n - WINDOW_TOKENS), n):
        window = token_ids[start:]
        try:
            text = index.bytes_of(window).decode("utf-8")
        except UnicodeDecodeError:
            continue  # the window starts inside a character: start one token later
        if tokenizer.encode(text) == window:
            break
    else:
        return HealedPrompt(list(token_ids))
    stable = min(
        _common_prefix(window, probed) for probed in tokenizer.encode_batch([text + p for p in PROBES])
    )
    stable = min(stable, _last_piece_token(tokenizer, text, window, index.bytes_of))
    stable = max(stable, len(window) - MAX_HEALED_TOKENS, 1 if start == 0 else 0)
    # Never inside a character (byte-fallback tokens hold one byte each): the removed text starts
    # with a character's first byte, never with a UTF-8 continuation byte (0b10xxxxxx).
    while (
        stable < len(window)
        and (index.bytes_of(window[stable : stable + 1])[:1] or b"\x80")[0] & 0xC0 == 0x80
    ):
        stable += 1
    if stable >= len(window):
        return HealedPrompt(list(token_ids))
    removed = index.bytes_of(window[stable:])
    if len(index.agreeing_ids(removed)) == 0:
        return HealedPrompt(list(token_ids))
    keep = start + stable
    return HealedPrompt(list(token_ids[:keep]), removed, n - keep)
