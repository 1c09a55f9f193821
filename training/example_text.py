"""The text of a training example, laid out by the engine's own codedraft FIM template.

The prompts come from `inference.prompts.fim`, so the models learn the layout the engine asks in:

    <|file_sep|>{path_1}\\n{text_1}\\n ... <|file_sep|>{path}\\n   (omitted with no snippets and no path)
    PSM: <|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>{middle}<|endoftext|>
    SPM: <|fim_suffix|>{suffix}<|fim_prefix|>{prefix}<|fim_middle|>{middle}<|endoftext|>
"""

from __future__ import annotations

from collections.abc import Sequence

from inference.prompts.fim import fim_layout

CODEDRAFT_FIM = fim_layout("codedraft")
EOS = "<|endoftext|>"
FIM_PAD = "<|fim_pad|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"

# The tokenizer's special tokens; their order fixes the ids: <|endoftext|> is id 0, the others follow.
SPECIAL_TOKENS: tuple[str, ...] = (
    EOS,
    CODEDRAFT_FIM.prefix,
    CODEDRAFT_FIM.suffix,
    CODEDRAFT_FIM.middle,
    FIM_PAD,
    CODEDRAFT_FIM.file_sep,
    IM_START,
    IM_END,
)


def fim_training_text(
    prefix: str,
    middle: str,
    suffix: str,
    *,
    spm: bool,
    path: str | None = None,
    snippets: Sequence[tuple[str, str]] = (),
) -> str:
    """A complete fill-in-the-middle example: the engine's prompt, the middle, then end of text."""
    return CODEDRAFT_FIM.build(prefix, suffix, snippets=snippets, path=path, spm=spm) + middle + EOS


def plain_training_text(text: str, path: str | None, ends_file: bool) -> str:
    """A left-to-right example; a window that reaches the end of its file ends with end of text."""
    return CODEDRAFT_FIM.context((), path) + text + (EOS if ends_file else "")
