"""The filters in the order a suggestion passes through them, and the verdict it comes out with."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lsp_server.completion.postprocess.balance_brackets import balance_brackets
from lsp_server.completion.postprocess.context import CursorContext
from lsp_server.completion.postprocess.cut_repetition import cut_repetition
from lsp_server.completion.postprocess.drop_empty import drop_empty
from lsp_server.completion.postprocess.drop_open_tail import drop_open_tail
from lsp_server.completion.postprocess.drop_suffix_repeat import drop_suffix_repeat
from lsp_server.completion.postprocess.prefer_parsable import prefer_parsable
from lsp_server.completion.postprocess.stop_at_block_end import stop_at_block_end
from lsp_server.completion.postprocess.stop_at_scope_end import stop_at_scope_end
from lsp_server.completion.postprocess.trim_whitespace import trim_whitespace

Filter = Callable[[CursorContext, str], "str | None"]

DEFAULT_FILTERS: tuple[Filter, ...] = (
    drop_empty,
    trim_whitespace,
    cut_repetition,
    stop_at_block_end,
    stop_at_scope_end,
    balance_brackets,
    drop_suffix_repeat,
    prefer_parsable,
    drop_open_tail,
    trim_whitespace,
)


@dataclass(frozen=True)
class Verdict:
    """What is left of a suggestion; when nothing is, ``dropped_by`` names the filter that dropped it
    (or cut it down to whitespace)."""

    text: str | None
    dropped_by: str | None = None


def postprocess(context: CursorContext, text: str, filters: Sequence[Filter] = DEFAULT_FILTERS) -> Verdict:
    """Runs ``text`` through ``filters`` in order; stops at the first that drops it or leaves only
    whitespace."""
    current = text
    for apply in filters:
        result = apply(context, current)
        if result is None or not result.strip():
            return Verdict(None, apply.__name__)
        current = result
    return Verdict(current)
