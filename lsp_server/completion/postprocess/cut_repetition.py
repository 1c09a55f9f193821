"""Cut a suggestion where it starts looping.

The daemon stops most loops itself (finish reason ``repetition``), but what is left still reaches
here: a loop the token budget ended before the daemon was sure of it, or a remote engine that does not
look for loops at all. This filter sees the whole suggestion, so it can tell a loop the model was
still in when it stopped (the run reaches the end of the text: three copies are enough) from
repetition it left by itself (five copies needed, as in the daemon).

* A line that repeats a piece of itself (``x * x * x * …``, ``'d', 'd', 'd', …``) is unfinishable: the
  suggestion is cut at the start of that line.
* A line, or a block of up to four lines, repeated line after line is kept once.

Repetition of a single character (a ``# -----`` divider, ``"===="``) is not a loop, and short runs are
not either: ``x * x * x`` and tables or dicts of similar (not identical) lines survive.
"""

from __future__ import annotations

import re

from lsp_server.completion.postprocess.context import CursorContext

_MAX_BLOCK_LINES = 4
_COPIES = 5
_COPIES_AT_END = 3
_MIN_RUN_CHARS = 24  # a run of a piece within one line shorter than this is a short list, not a loop
_MIN_RUN_CHARS_AT_END = 16
# A piece of 2 to 60 characters followed by at least two more copies of itself.
_RUN_IN_LINE = re.compile(r"(.{2,60}?)\1{2,}")


def cut_repetition(context: CursorContext, text: str) -> str | None:
    """``text`` up to where it starts looping (see the module docstring); unchanged when it does not."""
    lines = text.split("\n")
    # whole lines, as the document will hold them: the first begins with the cursor line's text
    whole = [context.line_prefix + lines[0], *lines[1:]]
    for index, line in enumerate(lines):
        if _loops_within(line, at_end=index == len(lines) - 1):
            return "\n".join(lines[:index])
        kept = _block_repeated_from(whole, index)
        if kept is not None:
            return "\n".join(lines[: index + kept])
    return text


def _loops_within(line: str, at_end: bool) -> bool:
    """Whether ``line`` holds a run of one piece repeated enough to be a loop."""
    for match in _RUN_IN_LINE.finditer(line):
        piece = match.group(1)
        if len(set(piece.replace(" ", ""))) < 2:
            continue
        copies, end = _extend(line, match.start(), len(piece))
        run = end - match.start()
        if copies >= _COPIES and run >= _MIN_RUN_CHARS:
            return True
        if at_end and end == len(line) and copies >= _COPIES_AT_END and run >= _MIN_RUN_CHARS_AT_END:
            return True
    return False


def _extend(line: str, start: int, size: int) -> tuple[int, int]:
    """Whole copies of ``line[start:start + size]`` from ``start``, and where the run (with a final
    partial copy) ends."""
    piece = line[start : start + size]
    copies, position = 0, start
    while line.startswith(piece, position):
        copies, position = copies + 1, position + size
    rest = line[position:]
    if rest and piece.startswith(rest):
        position = len(line)
    return copies, position


def _block_repeated_from(lines: list[str], index: int) -> int | None:
    """The block size when a block of lines starting at ``index`` repeats into a loop, else None."""
    for size in range(1, _MAX_BLOCK_LINES + 1):
        block = lines[index : index + size]
        if len(block) < size or not all(line.strip() for line in block):
            return None
        if len(set("".join(block).replace(" ", ""))) < 2:
            continue
        copies, position = 1, index + size
        while lines[position : position + size] == block:
            copies, position = copies + 1, position + size
        rest = lines[position:]
        reaches_end = not rest or (len(rest) < size and _is_partial_copy(rest, block))
        if copies >= _COPIES or (reaches_end and copies >= _COPIES_AT_END):
            return size
    return None


def _is_partial_copy(rest: list[str], block: list[str]) -> bool:
    """Whether the last lines begin another copy of ``block`` (the last one possibly cut short)."""
    *whole, last = rest
    return whole == block[: len(whole)] and block[len(whole)].startswith(last)
