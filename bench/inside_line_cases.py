"""The cursors inside a line of ``codedraft bench model --inside-line-cases``: text after the cursor on
its line, where the language server shows one line (``lsp_server.completion.block_or_line``).

Cases come from the same function-body lines of held-out files as ``bench/cursor_cases.py``, with the
cursor where an editor user has it with text after it:

* ``closers``: typing the contents of a line's last brackets, the closing brackets the editor inserted
  after the cursor (``return max(a, |)``): the hidden part runs from a point after the opening bracket
  to the closers at the line's end;
* ``identifier``: retyping a name in the middle of a line (``def total(amo|, count):``): the hidden
  part is the rest of a half-typed identifier with more of the line after it.

Half the cases are of each kind. The truth is the hidden part alone: a suggestion is exactly right
when it fills it and stops. The selection depends on the seed only.
"""

from __future__ import annotations

import random
import re
from typing import Any

from bench.cursor_cases import CursorCase

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")
_CLOSERS = {")": "(", "]": "[", "}": "{"}


def _last_brackets(line: str) -> tuple[int, int] | None:
    """(offset after the opener, offset of the closer) of the brackets whose closer begins the run of
    closing brackets that ends ``line``; None when the line ends otherwise or they hold nothing."""
    body = line.rstrip()
    tail = len(body)
    while tail > 0 and body[tail - 1] in _CLOSERS:
        tail -= 1
    if tail == len(body):
        return None
    stack: list[int] = []  # offsets of the openers still open
    for offset, char in enumerate(body[:tail]):
        if char in _CLOSERS.values():
            stack.append(offset)
        elif char in _CLOSERS and stack:
            stack.pop()
    if not stack or _CLOSERS[body[tail]] != body[stack[-1]]:
        return None
    opener = stack[-1]
    if not body[opener + 1 : tail].strip():
        return None
    return opener + 1, tail


def inside_line_cases(files: list[Any], count: int, seed: int) -> list[CursorCase]:
    """``count`` cases (fewer when the lines run out), drawn as described in the module docstring."""
    from bench.infill_cases import function_line_cases

    rng = random.Random(seed)
    cases: list[CursorCase] = []
    drawn = {"closers": 0, "identifier": 0}
    for case in function_line_cases(files, count * 8, seed):
        if len(cases) == count:
            break
        line = case.middle
        spots: list[tuple[int, int, str]] = []
        brackets = _last_brackets(line)
        if brackets is not None:
            start, end = brackets
            spots.append((rng.randint(start, end - 1), end, "closers"))
        names = [m for m in _IDENTIFIER.finditer(line) if line[m.end() :].strip()]
        if names:
            name = rng.choice(names)
            spots.append((rng.randint(name.start() + 1, name.end() - 1), name.end(), "identifier"))
        # Half of each kind: lines ending in brackets are the fewer.
        spots = [spot for spot in spots if drawn[spot[2]] < (count + 1) // 2]
        if not spots:
            continue
        cut, end, kind = rng.choice(spots)
        drawn[kind] += 1
        cases.append(
            CursorCase(
                case.path,
                case.prefix + line[:cut],
                line[cut:end],
                line[end:] + case.suffix,
                line,
                case.line_above,
                kind,
            )
        )
    return cases
