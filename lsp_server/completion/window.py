"""The part of the document a completion prompt carries: whole lines around the cursor, cut at
stable line boundaries so that the prompt's start does not move while the user types."""

from __future__ import annotations

from dataclasses import dataclass

from indexer.token_estimate import DEFAULT_ESTIMATE, TokenEstimate

# Window edges move in steps of this many lines, so that typing (even across a few lines) leaves the
# start of the prompt, and with it the daemon's cached KV, unchanged.
LINE_STEP = 16


@dataclass(frozen=True)
class DocumentWindow:
    """``prefix`` + ``suffix`` is lines ``first_line``..``last_line`` of the document (0-based, inclusive)
    with the cursor between them."""

    prefix: str
    suffix: str
    first_line: int
    last_line: int


def cursor_window(
    text: str,
    offset: int,
    prefix_tokens: int,
    suffix_tokens: int,
    line_step: int = LINE_STEP,
    estimate: TokenEstimate = DEFAULT_ESTIMATE,
) -> DocumentWindow:
    """The window around character ``offset`` of ``text`` within the token budgets (tokens as
    ``estimate`` counts them; the daemon counts real ones and cuts by its own policy if short).

    The prefix keeps whole lines nearest the cursor up to its budget, then drops lines from its start
    up to a multiple of ``line_step``; the suffix does the same towards the end (unless the budget
    is under a step). The cursor's own line is always whole.
    """
    offset = max(0, min(offset, len(text)))
    before, after = text[:offset], text[offset:]
    lines_before = before.split("\n")
    lines_after = after.split("\n")
    cursor_line = len(lines_before) - 1

    budget = estimate.chars(prefix_tokens) - len(lines_before[-1])
    keep = 1
    while keep < len(lines_before) and budget - len(lines_before[-keep - 1]) - 1 >= 0:
        budget -= len(lines_before[-keep - 1]) + 1
        keep += 1
    first_line = cursor_line - keep + 1
    rounded = -(-first_line // line_step) * line_step
    if 0 < first_line and rounded < cursor_line:
        first_line = rounded
    prefix = "\n".join(lines_before[first_line:])

    budget = estimate.chars(suffix_tokens) - len(lines_after[0])
    keep = 1
    while keep < len(lines_after) and budget - len(lines_after[keep]) - 1 >= 0:
        budget -= len(lines_after[keep]) + 1
        keep += 1
    last_line = cursor_line + keep - 1
    document_last = cursor_line + len(lines_after) - 1
    rounded = last_line // line_step * line_step
    if last_line < document_last and rounded > cursor_line:
        last_line = rounded
    suffix = "\n".join(lines_after[: last_line - cursor_line + 1])
    return DocumentWindow(prefix, suffix, first_line, last_line)
