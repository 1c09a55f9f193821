"""Builds a cursor context from a document with a ``|`` marking the cursor."""

from __future__ import annotations

from lsp_server.completion.postprocess.context import CursorContext


def at_cursor(document: str, language: str | None = "python") -> CursorContext:
    prefix, bar, suffix = document.partition("|")
    assert bar, "the document needs a | for the cursor"
    return CursorContext(prefix, suffix, language)
