"""Prompting a model that has no fill-in-the-middle tokens: where its document starts, and where its
completion must stop because it runs into the code after the cursor.

Document start. A model is trained on documents that begin with its BOS when its tokenizer puts one
before every text (Llama-3's `<|begin_of_text|>`, Llama-2's `<s>`), and otherwise follow the end of
the previous document, `<|endoftext|>` in the GPT-2 family of vocabularies (SmolLM2, Qwen, StarCoder).
A `bos_token` that the tokenizer does not add itself is not a document start: SmolLM2-Instruct names
its chat-turn opener `<|im_start|>` as BOS, and a completion prompt that starts a chat turn makes the
model answer like an assistant instead of continuing the file.

Suffix stop. Without FIM tokens the model never sees the suffix, so the daemon stops the completion
where its text runs into the suffix's first non-blank line: on the cursor's own line that is the rest
of the line followed by its newline, on a later line that line (with its indentation) after a newline.
"""

from __future__ import annotations

import re

from inference.tokenizer import Tokenizer

DOCUMENT_SEPARATOR = "<|endoftext|>"
# Tokens that open a chat turn in common chat formats; never a document start.
CHAT_TURN_OPENERS = frozenset(
    {"<|im_start|>", "<|start_header_id|>", "<start_of_turn>", "[INST]", "<|user|>"}
)
_ROLE_AFTER = r"""\s*['"]?\s*(\+\s*message|system|user|assistant)"""


def _opens_chat_turns(token: str, chat_template: str | None) -> bool:
    if token in CHAT_TURN_OPENERS:
        return True
    return bool(chat_template) and re.search(re.escape(token) + _ROLE_AFTER, chat_template or "") is not None


def document_start(tokenizer: Tokenizer, chat_template: str | None = None) -> str:
    """The text a prefix-only prompt starts with (see the module docstring); "" when there is none."""
    template = chat_template
    if template is None and isinstance(tokenizer.config.get("chat_template"), str):
        template = tokenizer.config["chat_template"]
    bos, bos_id = tokenizer.bos_token, tokenizer.bos_token_id
    added = tokenizer.leading_special_ids()
    adds_bos = bos_id is not None and (bos_id in added or tokenizer.config.get("add_bos_token") is True)
    if bos and adds_bos and not _opens_chat_turns(bos, template):
        return bos
    if tokenizer.token_id(DOCUMENT_SEPARATOR) is not None and not _opens_chat_turns(
        DOCUMENT_SEPARATOR, template
    ):
        return DOCUMENT_SEPARATOR
    return ""


def suffix_stop(suffix: str) -> str | None:
    """The stop string where a completion runs into the suffix's first non-blank line (None: no line)."""
    first, newline, rest = suffix.partition("\n")
    if first.strip():
        # The rest of the cursor's line ends the completion only once it is followed by the line end
        # too; a bare ")" would cut every call the completion writes before it.
        return first.rstrip() + "\n" if newline else None
    for line in rest.split("\n"):
        if line.strip():
            return "\n" + line.rstrip()
    return None
