"""Prefer the longest part of a suggestion after which the file parses as well as before."""

from __future__ import annotations

from lsp_server.completion.postprocess.context import CursorContext
from lsp_server.completion.syntax import MAX_PARSE_CHARS, error_count


def prefer_parsable(context: CursorContext, text: str) -> str | None:
    """Keeps the whole suggestion if the file has no more syntax errors with it than without it;
    otherwise the longest run of its leading lines that adds no error; otherwise, at the end of a line,
    the suggestion as it is (the user may be mid-edit: a file that does not parse is no reason to show
    nothing), and inside a line nothing: the rest of that line is already written, and a suggestion
    that parses worse before it breaks the line (SmolLM2's ``):`` at ``def total(amount|, count):``).

    Each candidate is parsed incrementally from the document's tree (``CursorSyntax.with_insertion``)."""
    kept = parsable_part(context, text)
    if kept is not None:
        return kept
    return None if context.inside_a_line else text


def parsable_part(context: CursorContext, text: str) -> str | None:
    """The whole suggestion or the longest run of its leading lines that adds no syntax error to the
    file; the suggestion as it is where the file is not parsed (no grammar, too long); None when no
    part parses as well as the file without it."""
    syntax = context.syntax
    if syntax is None or len(context.prefix) + len(context.suffix) + len(text) > MAX_PARSE_CHARS:
        return text
    before = syntax.error_count
    lines = text.split("\n")
    for keep in range(len(lines), 0, -1):
        candidate = "\n".join(lines[:keep])
        if not candidate.strip():
            break
        if error_count(syntax.with_insertion(candidate)) <= before:
            return candidate
    return None
