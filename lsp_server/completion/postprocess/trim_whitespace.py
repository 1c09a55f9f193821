"""Trim trailing whitespace on every line and blank lines at the end of a suggestion."""

from __future__ import annotations

from lsp_server.completion.postprocess.context import CursorContext


def trim_whitespace(context: CursorContext, text: str) -> str | None:
    """Strips trailing spaces per line and trailing blank lines; a leading space is dropped when the
    cursor already follows one (the editor would show two)."""
    lines = [line.rstrip() for line in text.split("\n")]
    while len(lines) > 1 and not lines[-1]:
        lines.pop()
    trimmed = "\n".join(lines)
    if context.line_prefix.endswith((" ", "\t")) and context.line_prefix.strip():
        trimmed = trimmed.lstrip(" \t")
    return trimmed
