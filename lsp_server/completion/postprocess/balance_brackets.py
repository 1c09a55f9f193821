"""Cut a suggestion at a closing bracket that closes nothing."""

from __future__ import annotations

from lsp_server.completion.postprocess.brackets import scan
from lsp_server.completion.postprocess.context import CursorContext

# How far back the prefix is scanned for brackets still open at the cursor.
_CONTEXT_LINES = 30


def balance_brackets(context: CursorContext, text: str) -> str | None:
    """Cuts the suggestion before its first closing bracket that matches no bracket open at that point
    (in the suggestion or in the last lines before the cursor): the model went on past the end of the
    expression or block the cursor is in."""
    recent_prefix = "\n".join(context.prefix.split("\n")[-_CONTEXT_LINES:])
    open_before, _, _ = scan(recent_prefix)
    _, _, first_unmatched = scan(text, open_before)
    if first_unmatched is None:
        return text
    return text[:first_unmatched]
