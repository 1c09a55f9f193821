"""Stop a suggestion where the syntax node the cursor is in (function, class, block) ends."""

from __future__ import annotations

from lsp_server.completion.postprocess.context import CursorContext
from lsp_server.completion.syntax import MAX_PARSE_CHARS, encode


def stop_at_scope_end(context: CursorContext, text: str) -> str | None:
    """Parses the document with the suggestion in place and cuts the suggestion at the end of the
    innermost definition (the language's chunk node types: function, class, method) that contains the
    cursor, when that definition ends inside the suggestion: what follows belongs to other code."""
    syntax = context.syntax if "\n" in text else None
    if syntax is None or len(context.prefix) + len(context.suffix) + len(text) > MAX_PARSE_CHARS:
        return text
    start = syntax.cursor
    inserted = encode(text)
    node = syntax.with_insertion(text).root_node.descendant_for_byte_range(start, start)
    while node is not None and node.type not in syntax.spec.chunk_types:
        node = node.parent
    if node is None or not start < node.end_byte < start + len(inserted):
        return text
    cut = node.end_byte - start
    line_end = inserted.find(b"\n", cut)
    kept = inserted[: line_end if line_end != -1 else len(inserted)]
    return kept.decode("utf-8", errors="ignore")
