"""Bracket scanning shared by the filters: which brackets a piece of code leaves open or unmatched.

Quoted text on a line is skipped (a quote opens until the same quote closes it on that line), so
brackets inside strings do not count. Not a parser: good enough to compare candidate suggestions.
"""

from __future__ import annotations

OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = {")": "(", "]": "[", "}": "{"}
_QUOTES = "\"'`"


def scan(text: str, stack: list[str] | None = None) -> tuple[list[str], int, int | None]:
    """Scans ``text`` for brackets, continuing ``stack`` (openers still open before it).

    Returns the openers still open after it, the number of closers that matched nothing plus quotes
    left open at the end of a line, and the offset of the first closer that matched nothing (or None).
    """
    open_stack = list(stack or [])
    unmatched = 0
    first_unmatched: int | None = None
    quote: str | None = None
    escaped = False
    for offset, char in enumerate(text):
        if quote is not None:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
            elif char == "\n":
                quote = None
                unmatched += 1
            continue
        if char in _QUOTES:
            quote = char
        elif char in OPENERS:
            open_stack.append(char)
        elif char in CLOSERS:
            if open_stack and open_stack[-1] == CLOSERS[char]:
                open_stack.pop()
            else:
                unmatched += 1
                if first_unmatched is None:
                    first_unmatched = offset
    if quote is not None:
        unmatched += 1
    return open_stack, unmatched, first_unmatched


def imbalance(text: str) -> int:
    """Openers left open, closers that matched nothing and quotes left open in ``text``."""
    open_stack, unmatched, _ = scan(text)
    return len(open_stack) + unmatched
