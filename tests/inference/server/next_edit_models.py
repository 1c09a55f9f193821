"""Tiny checkpoints whose greedy reply to a next-edit prompt is known in advance, for PredictEdit tests.

As in tests/fixtures/scripted_model.py, every layer's output projections are zero, so the model is a
bigram table: the lm_head row of token ``s`` is the (normalised) embedding of the token it follows.
The chain starts at the prompt's last token, so the reply is ``reply`` whatever came before it.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from tests.fixtures.scripted_model import write_bigram_weights
from tests.fixtures.tiny_models import SPECIAL_TOKENS, make_tiny_checkpoint, train_tokenizer_json

ZETA_MARKERS = (
    "<|editable_region_start|>",
    "<|editable_region_end|>",
    "<|user_cursor_is_here|>",
    "<|start_of_file|>",
)


def tokens_of(text: str, special_tokens: tuple[str, ...] = SPECIAL_TOKENS) -> list[int]:
    """Token ids of ``text`` in the tiny tokenizer trained with ``special_tokens``."""
    from tokenizers import Tokenizer

    return list(Tokenizer.from_str(train_tokenizer_json(special_tokens)).encode(text).ids)


def distinct_words(count: int) -> list[str]:
    """``count`` lower-case words (with their leading space) that are one token each, all different."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(train_tokenizer_json(SPECIAL_TOKENS))
    words = sorted(
        t[1:] for t in tokenizer.get_vocab() if t[:1] == "Ġ" and t[1:].isalpha() and t[1:].islower()
    )
    single = [f" {w}" for w in words if len(tokenizer.encode(f" {w}").ids) == 1]
    return single[:count]


def make_reply_checkpoint(
    directory: Path,
    prompt_end: str,
    reply: str,
    *,
    special_tokens: tuple[str, ...] = SPECIAL_TOKENS,
    then_eos: bool = True,
) -> Path:
    """A llama checkpoint in ``directory`` that answers a prompt ending in the last token of
    ``prompt_end`` with ``reply`` and then end-of-text (``then_eos``), or with whatever follows the
    reply's last token in the reply (a loop). ValueError when a token would need two successors."""
    out = make_tiny_checkpoint(directory, "llama", seed=7, max_position_embeddings=2048)
    tokenizer_json = train_tokenizer_json(special_tokens)
    (out / "tokenizer.json").write_text(tokenizer_json, encoding="utf-8")
    eos = next(t["id"] for t in json.loads(tokenizer_json)["added_tokens"] if t["content"] == "<|endoftext|>")
    chain = [tokens_of(prompt_end, special_tokens)[-1], *tokens_of(reply, special_tokens)]
    if then_eos:
        chain.append(eos)
    successor: dict[int, int] = {}
    for current, following in itertools.pairwise(chain):
        if successor.setdefault(current, following) != following:
            raise ValueError(f"token {current} would need two successors; choose another reply")
    write_bigram_weights(out, successor)
    return out
