"""Drop suggestions that would show nothing."""

from __future__ import annotations

from lsp_server.completion.postprocess.context import CursorContext


def drop_empty(context: CursorContext, text: str) -> str | None:
    """``None`` for an empty or whitespace-only suggestion."""
    return text if text.strip() else None
