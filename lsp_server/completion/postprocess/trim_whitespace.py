"""Trim trailing whitespace on every line and blank lines at the end of a suggestion."""

from __future__ import annotations

from lsp_server.completion.postprocess.context import CursorContext


def trim_whitespace(context: CursorContext, text: str) -> str | None:
    """Strips trailing spaces per line and trailing blank lines. Leading spaces and tabs are dropped
    when the cursor already follows whitespace: after ``x = `` the editor would show two spaces, and in
    a line's indentation the suggestion's own indentation would double it."""
    lines = [line.rstrip() for line in text.split("\n")]
    while len(lines) > 1 and not lines[-1]:
        lines.pop()
    trimmed = "\n".join(lines)
    if context.line_prefix.endswith((" ", "\t")):
        trimmed = trimmed.lstrip(" \t")
    return trimmed
