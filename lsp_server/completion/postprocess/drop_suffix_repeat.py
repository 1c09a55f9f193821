"""Drop the part of a suggestion that repeats text already after the cursor."""

from __future__ import annotations

from lsp_server.completion.postprocess.brackets import imbalance
from lsp_server.completion.postprocess.context import CursorContext


def drop_suffix_repeat(context: CursorContext, text: str) -> str | None:
    """Removes what the document already has after the cursor.

    * The suggestion's lines that repeat the lines after the cursor line (the model re-writing code
      that follows) are cut, from the first line that starts such a repeat.
    * The end of the suggestion's last line that the rest of the cursor line already holds (a closing
      ``)`` the editor auto-inserted, say) is cut, when that leaves the line better balanced: in
      ``print(|)`` the suggestion ``len(x)`` keeps its ``)``.
    """
    lines = text.split("\n")
    following = [line.strip() for line in context.following_lines if line.strip()]
    if following and len(lines) > 1:
        for index in range(1, len(lines)):
            if lines[index].strip() and _starts_repeat(lines[index:], following):
                lines = lines[:index]
                break
    while len(lines) > 1 and not lines[-1].strip():
        lines.pop()
    cut = _without_overlap(lines[-1], context.line_suffix.strip())
    if cut != lines[-1] and _imbalance_with(context, [*lines[:-1], cut]) < _imbalance_with(context, lines):
        lines[-1] = cut
    return "\n".join(lines)


def _imbalance_with(context: CursorContext, lines: list[str]) -> int:
    return imbalance(context.line_prefix + "\n".join(lines) + context.line_suffix)


def _starts_repeat(candidate: list[str], following: list[str]) -> bool:
    """Whether the candidate's non-blank lines begin with the first following lines (two, or all if
    fewer remain)."""
    wanted = following[: min(2, len(following))]
    got = [line.strip() for line in candidate if line.strip()][: len(wanted)]
    return got == wanted


def _without_overlap(last_line: str, line_suffix: str) -> str:
    """The last line minus its longest ending that begins the cursor line's rest."""
    if not line_suffix:
        return last_line
    for size in range(min(len(last_line), len(line_suffix)), 0, -1):
        if last_line.endswith(line_suffix[:size]):
            return last_line[:-size]
    return last_line
