"""Whether a keystroke should ask the model at all, and if not, why (for ``codedraft/status``)."""

from __future__ import annotations

from lsp_server.completion.postprocess.context import CursorContext
from lsp_server.config import CompletionSettings

# Syntax nodes inside a string or comment that are code again (f-string and template interpolations).
_CODE_INSIDE_TEXT = ("interpolation", "template_substitution", "substitution", "embedded")


def suppression_reason(
    context: CursorContext, settings: CompletionSettings, deleted: bool = False
) -> str | None:
    """Why no suggestion should be requested at this cursor, or None to request one.

    ``deleted`` says the edit that led here removed text (backspace): the user is correcting, not
    writing, so no suggestion is asked for.
    """
    if not settings.enabled:
        return "completions are disabled"
    languages = settings.enabled_languages
    if "*" not in languages and (context.language or "") not in languages:
        return f"completions are not enabled for {context.language or 'this language'}"
    if deleted:
        return "the last edit deleted text"
    if settings.disable_in_comments or settings.disable_in_strings:
        where = text_context(context)
        if where == "comment" and settings.disable_in_comments:
            return "the cursor is in a comment"
        if where == "string" and settings.disable_in_strings:
            return "the cursor is in a string"
    return None


def text_context(context: CursorContext) -> str | None:
    """``"comment"`` or ``"string"`` when the cursor is inside one (by the language's grammar), else None."""
    syntax = context.syntax if context.prefix else None
    if syntax is None:
        return None
    cursor = syntax.cursor
    node = syntax.tree.root_node.descendant_for_byte_range(cursor - 1, cursor)
    while node is not None:
        kind = node.type
        if any(part in kind for part in _CODE_INSIDE_TEXT):
            return None
        if "comment" in kind and node.start_byte < cursor <= node.end_byte:
            return "comment"
        if ("string" in kind or kind.endswith("char_literal")) and node.start_byte < cursor < node.end_byte:
            return "string"
        node = node.parent
    return None
