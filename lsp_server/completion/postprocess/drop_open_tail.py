"""Drop the block a multi-line suggestion opens on its last line and never writes.

A model stopped by its token budget ends a block mid-way: ``if n == 1:`` with no body after it. The
file then does not parse once the suggestion is accepted, yet tree-sitter-python reads a header at
the end of the file as an empty block without an error, so ``prefer_parsable`` keeps it (Gemma 3 at
the VS Code e2e's ``def fibonacci(n):`` cursor, 5 December). The first non-blank line is never
dropped: a one-line suggestion that opens a block (``class A(Base):``) is where the user writes the
body next.
"""

from __future__ import annotations

from lsp_server.completion.postprocess.context import CursorContext
from lsp_server.completion.postprocess.stop_at_block_end import opens_block


def without_open_tail(rows: list[str]) -> list[str]:
    """``rows`` less its last non-blank rows, after the first non-blank one, that open a block whose
    body does not follow (and what follows them)."""
    first = next((i for i, row in enumerate(rows) if row.strip()), len(rows))
    keep = len(rows)
    while True:
        last = next((i for i in range(keep - 1, -1, -1) if rows[i].strip()), -1)
        if last <= first or not opens_block(rows[last]):
            return rows[:keep]
        keep = last


def drop_open_tail(context: CursorContext, text: str) -> str | None:
    """The suggestion without the block headers it ends on (see the module's docstring)."""
    return "\n".join(without_open_tail(text.split("\n")))
