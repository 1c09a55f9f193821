"""The codedraft fill-in-the-middle format: the exact text layout the default models are trained on.

It must match the FIM contract (``fim_template: "codedraft"``) that the engine's ``FimTemplate`` builds:

    <|file_sep|>{path_1}\\n{text_1}\\n ... <|file_sep|>{path}\\n   (omitted with no snippets and no path)
    PSM: <|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>{middle}<|endoftext|>
    SPM: <|fim_suffix|>{suffix}<|fim_prefix|>{prefix}<|fim_middle|>{middle}<|endoftext|>
"""

from __future__ import annotations

from collections.abc import Sequence

EOS = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_SUFFIX = "<|fim_suffix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_PAD = "<|fim_pad|>"
FILE_SEP = "<|file_sep|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"

# Order fixes the ids: <|endoftext|> is id 0, the others follow.
SPECIAL_TOKENS: tuple[str, ...] = (
    EOS,
    FIM_PREFIX,
    FIM_SUFFIX,
    FIM_MIDDLE,
    FIM_PAD,
    FILE_SEP,
    IM_START,
    IM_END,
)


def context_header(snippets: Sequence[tuple[str, str]], path: str | None) -> str:
    """The ``<|file_sep|>`` lines: one per snippet (path, text), then the current file's path.

    With no snippets and no path the header is empty. With snippets but no path the current file is
    named ``untitled``, as the engine's template does, so the model still sees where the snippets end.
    """
    if not snippets and not path:
        return ""
    parts = [f"{FILE_SEP}{snippet_path}\n{text}\n" for snippet_path, text in snippets]
    parts.append(f"{FILE_SEP}{path or 'untitled'}\n")
    return "".join(parts)


def fim_prompt(
    prefix: str,
    suffix: str,
    *,
    spm: bool,
    path: str | None = None,
    snippets: Sequence[tuple[str, str]] = (),
) -> str:
    """The prompt up to and including ``<|fim_middle|>``; the model continues with the middle."""
    if spm:
        body = f"{FIM_SUFFIX}{suffix}{FIM_PREFIX}{prefix}{FIM_MIDDLE}"
    else:
        body = f"{FIM_PREFIX}{prefix}{FIM_SUFFIX}{suffix}{FIM_MIDDLE}"
    return context_header(snippets, path) + body


def fim_training_text(
    prefix: str,
    middle: str,
    suffix: str,
    *,
    spm: bool,
    path: str | None = None,
    snippets: Sequence[tuple[str, str]] = (),
) -> str:
    """A complete training example: the prompt, the middle, then end of text."""
    return fim_prompt(prefix, suffix, spm=spm, path=path, snippets=snippets) + middle + EOS


def plain_training_text(text: str, path: str | None, ends_file: bool) -> str:
    """A left-to-right example; a window that reaches the end of its file ends with end of text."""
    header = f"{FILE_SEP}{path}\n" if path else ""
    return header + text + (EOS if ends_file else "")
