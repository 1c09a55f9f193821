"""Prefer the longest part of a suggestion after which the file parses as well as before."""

from __future__ import annotations

from lsp_server.completion.postprocess.context import CursorContext
from lsp_server.completion.syntax import error_count, language_spec, parse

# Documents larger than this are not re-parsed per candidate (the filter then keeps the suggestion).
_MAX_PARSE_CHARS = 400_000


def prefer_parsable(context: CursorContext, text: str) -> str | None:
    """Keeps the whole suggestion if the file has no more syntax errors with it than without it;
    otherwise the longest run of its leading lines that adds no error; otherwise the suggestion as it
    is (the user may be mid-edit: a file that does not parse is no reason to show nothing)."""
    spec = language_spec(context.language)
    if spec is None or len(context.prefix) + len(context.suffix) + len(text) > _MAX_PARSE_CHARS:
        return text
    before = error_count(parse(spec, context.prefix + context.suffix))
    lines = text.split("\n")
    for keep in range(len(lines), 0, -1):
        candidate = "\n".join(lines[:keep])
        if not candidate.strip():
            break
        if error_count(parse(spec, context.prefix + candidate + context.suffix)) <= before:
            return candidate
    return text
