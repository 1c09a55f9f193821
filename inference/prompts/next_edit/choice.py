"""Which next-edit format a model gets, from its tokenizer and its name.

In order: ``next_edit_format`` in tokenizer_config.json ("sweep", "zeta" or "chat"), as
``fim_template`` names a FIM layout; Zeta's markers in the vocabulary; Sweep's model by name
("sweep" and "next-edit" in the model's name) with the ``<|file_sep|>`` token its format needs;
otherwise the chat template with an instruction (which every instruct model has, or its fallback).
"""

from __future__ import annotations

import re

from inference.prompts.chat import ChatTemplate
from inference.prompts.next_edit.chat_instruction import ChatInstructionFormat
from inference.prompts.next_edit.inputs import NextEditFormat
from inference.prompts.next_edit.sweep import FILE_SEP, SweepFormat
from inference.prompts.next_edit.zeta import CURSOR, REGION_END, REGION_START, ZetaFormat
from inference.tokenizer import Tokenizer

FORMATS = ("sweep", "zeta", "chat")
_SWEEP_NAME = re.compile(r"sweep.*next[-_]?edit", re.IGNORECASE)


def detect_next_edit_format(tokenizer: Tokenizer, model_name: str = "") -> str:
    """The format's name for the model of ``tokenizer`` (``model_name``: its folder or file name)."""
    named = tokenizer.config.get("next_edit_format")
    if isinstance(named, str):
        if named not in FORMATS:
            raise ValueError(f"unknown next_edit_format {named!r} (known: {', '.join(FORMATS)})")
        return named
    if all(tokenizer.token_id(marker) is not None for marker in (REGION_START, REGION_END, CURSOR)):
        return "zeta"
    name = model_name or str(tokenizer.config.get("name_or_path") or "")
    if _SWEEP_NAME.search(name) and tokenizer.token_id(FILE_SEP) is not None:
        return "sweep"
    return "chat"


def next_edit_format_for(tokenizer: Tokenizer, model_name: str = "") -> NextEditFormat:
    """The renderer and parser for the model of ``tokenizer``."""
    name = detect_next_edit_format(tokenizer, model_name)
    if name == "sweep":
        return SweepFormat()
    if name == "zeta":
        return ZetaFormat()
    eos = (tokenizer.eos_token,) if tokenizer.eos_token else ()
    return ChatInstructionFormat(ChatTemplate.from_tokenizer(tokenizer), eos)
