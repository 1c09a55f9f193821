"""The naive prompt of ``codedraft bench model --naive-prompt``: the file's text before the cursor and
nothing else, as a user gives a raw prompt to llama.cpp (issue 38's comparison of SmolLM2 and Gemma).

The request still goes the language server's and the daemon's way (the document window its budgets
allow, the suffix stop, truncation, token healing when asked), but the daemon lays the prompt out as
llama.cpp lays out a raw prompt: no retrieved snippets, no path header, no FIM tokens, and in front
of the text only the BOS that the model's tokenizer adds to every text itself (llama.cpp's
``add_bos_token``), never a document separator the model was not told to expect.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # both import torch; the bench's command line loads it only to run a model
    from inference.backends.served_model import ServedModel
    from inference.tokenizer import Tokenizer


def llamacpp_start(tokenizer: Tokenizer) -> str:
    """What llama.cpp puts before a raw prompt: the BOS where the tokenizer adds one itself, else ""."""
    bos, bos_id = tokenizer.bos_token, tokenizer.bos_token_id
    if not bos or bos_id is None:
        return ""
    adds = bos_id in tokenizer.leading_special_ids() or tokenizer.config.get("add_bos_token") is True
    return bos if adds else ""


def naive_served(served: ServedModel) -> ServedModel:
    """``served`` building its completion prompts as the naive prompt (module docstring), given requests
    without snippets (a naive run retrieves none): the prefix-only layout, which writes no path header
    without snippets, started as llama.cpp starts it. The engine, tokenizer, stop tokens and limits
    are ``served``'s own."""
    fim = replace(
        served.fim,
        family="prefix-only",
        prefix="",
        suffix="",
        middle="",
        file_sep="",
        repo_name="",
        supports_spm=False,
        bos=llamacpp_start(served.tokenizer),
    )
    return replace(served, fim=fim)
