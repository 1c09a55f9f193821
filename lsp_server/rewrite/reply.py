"""The code in a model's reply: the first fenced block, or the whole reply when it has none."""

from __future__ import annotations

import re

_OPENING = re.compile(r"^(`{3,}|~{3,})[^\n`]*\n", re.MULTILINE)


def code_from_reply(reply: str) -> str | None:
    """The replacement code a reply carries, or None when it carries none (empty, or an unclosed
    fence with nothing in it)."""
    opening = _OPENING.search(reply)
    if opening is None:
        text = reply.strip("\n")
        return text if text.strip() else None
    fence = opening.group(1)
    body_start = opening.end()
    closing = re.compile(rf"^{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE).search(
        reply, body_start
    )
    body = reply[body_start : closing.start() if closing else len(reply)]
    body = body.removesuffix("\n")
    return body if body.strip() else None


def keep_indentation(original: str, replacement: str) -> str:
    """Re-indents ``replacement`` to the original's first-line indentation when the model dropped it."""
    original_indent = _indent(original)
    if not original_indent or _indent(replacement):
        return replacement
    return "\n".join(original_indent + line if line.strip() else line for line in replacement.split("\n"))


def _indent(text: str) -> str:
    first = next((line for line in text.split("\n") if line.strip()), "")
    return first[: len(first) - len(first.lstrip())]
