"""The cases ``codedraft bench next-edit`` replays: one file of a real commit, before and after, and
the changed places ("blocks") the commit made in it, in file order.

A block is a run of contiguous changed lines (a diff with no context lines). Replaying a case, the
user types the blocks one after the other; after each, the blocks still to come are the truth of the
next edit, and after the last there is nothing left to predict (the right answer is silence). A
rename case is replayed per occurrence instead: the user renames the first occurrence, the rest is
the truth.

The data file stores each case's ``before`` text and its blocks (not the ``after`` text) to stay
small; :func:`apply_blocks` rebuilds ``after``.
"""

from __future__ import annotations

import difflib
import io
import json
import keyword
import re
import tokenize
from dataclasses import asdict, dataclass
from pathlib import Path

CASES_FILE = Path(__file__).with_name("httpx_cases.json")
"""The committed cases, mined by :mod:`bench.next_edit.mine` from encode/httpx."""

KINDS = ("rename", "multi", "silence")

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class Block:
    """Lines ``start``..``end`` (0-based, end exclusive) of the text it applies to become ``lines``
    (each with its line end). Blocks of one change are listed first to last and index the same,
    original text."""

    start: int
    end: int
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Case:
    """One file of one commit. ``kind`` is "rename" (every block only replaces ``rename[0]`` with
    ``rename[1]``), "multi" (two or more blocks) or "silence" (one block: after it, nothing)."""

    name: str
    commit: str
    subject: str
    path: str
    kind: str
    before: str
    blocks: tuple[Block, ...]
    rename: tuple[str, str] | None = None
    change: str | None = None  # a "repeat" case's kind of transformation (``mine_repeats.py``)

    @property
    def after(self) -> str:
        """The file as the commit left it."""
        return apply_blocks(self.before, self.blocks)


def lines_of(text: str) -> list[str]:
    """``text``'s lines, each with its line end (``splitlines(keepends=True)`` on "\\n" only)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


def blocks_between(before: str, after: str) -> tuple[Block, ...]:
    """The changed places of ``before`` -> ``after``, first to last; () when the texts are equal."""
    old, new = lines_of(before), lines_of(after)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return tuple(
        Block(i1, i2, tuple(new[j1:j2])) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )


def apply_blocks(text: str, blocks: tuple[Block, ...] | list[Block]) -> str:
    """``text`` with ``blocks`` (which index ``text``'s lines and do not overlap) applied."""
    lines = lines_of(text)
    for block in sorted(blocks, key=lambda b: b.start, reverse=True):
        lines[block.start : block.end] = block.lines
    return "".join(lines)


def rename_of(before: str, after: str) -> tuple[str, str] | None:
    """(old, new) when ``before`` -> ``after`` only replaces whole tokens ``old`` with ``new``
    (identifiers, not keywords, the same pair everywhere, at two or more places); else None."""
    old_tokens, new_tokens = _TOKEN.findall(before), _TOKEN.findall(after)
    if len(old_tokens) != len(new_tokens):
        return None
    pairs = {(a, b) for a, b in zip(old_tokens, new_tokens, strict=True) if a != b}
    if len(pairs) != 1:
        return None
    old, new = next(iter(pairs))
    if not (_IDENTIFIER.fullmatch(old) and _IDENTIFIER.fullmatch(new)):
        return None
    if keyword.iskeyword(old) or keyword.iskeyword(new):
        return None
    changed = sum(a != b for a, b in zip(old_tokens, new_tokens, strict=True))
    return (old, new) if changed >= 2 else None


def occurrence_offsets(text: str, name: str) -> list[int]:
    """Character offsets of ``name`` as a whole token in ``text`` (strings and comments included)."""
    return [match.start() for match in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text)]


def load_cases(path: Path = CASES_FILE) -> list[Case]:
    """The cases of a data file written by :func:`save_cases`."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        Case(
            name=item["name"],
            commit=item["commit"],
            subject=item["subject"],
            path=item["path"],
            kind=item["kind"],
            before=item["before"],
            blocks=tuple(Block(b[0], b[1], tuple(b[2])) for b in item["blocks"]),
            rename=tuple(item["rename"]) if item.get("rename") else None,  # type: ignore[arg-type]
            change=item.get("change"),
        )
        for item in data["cases"]
    ]


def save_cases(cases: list[Case], source: dict[str, object], path: Path = CASES_FILE) -> None:
    """Writes ``cases`` with ``source`` (repository, commit range, rules) as compact JSON."""
    items = []
    for case in cases:
        item = asdict(case)
        item["blocks"] = [[b.start, b.end, list(b.lines)] for b in case.blocks]
        if item["change"] is None:
            del item["change"]  # the committed httpx cases stay as they were
        items.append(item)
    path.write_text(
        json.dumps({"source": source, "cases": items}, separators=(",", ":")) + "\n", encoding="utf-8"
    )


def renamed_offsets(before: str, after: str) -> list[int]:
    """Character offsets in ``before`` of the tokens ``before`` -> ``after`` changed, for texts of
    equally many tokens (a rename); [] otherwise."""
    old, new = list(_TOKEN.finditer(before)), _TOKEN.findall(after)
    if len(old) != len(new):
        return []
    return [match.start() for match, token in zip(old, new, strict=True) if match.group() != token]


def code_name_offsets(text: str, name: str) -> set[int]:
    """Character offsets of ``name`` where Python's tokenizer reads it as a name (not in a string or
    comment); every whole-token occurrence when the text does not tokenize."""
    starts = [0]
    for line in lines_of(text):
        starts.append(starts[-1] + len(line))
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return set(occurrence_offsets(text, name))
    return {
        starts[token.start[0] - 1] + token.start[1]
        for token in tokens
        if token.type == tokenize.NAME and token.string == name
    }


def user_rename(case: Case) -> tuple[int, str]:
    """Where the user renames first in a rename case, and the text after it: the first occurrence the
    commit renamed that is code (else the first it renamed)."""
    assert case.rename is not None
    old, new = case.rename
    offsets = renamed_offsets(case.before, case.after)
    code = code_name_offsets(case.before, old)
    offset = next((o for o in offsets if o in code), offsets[0])
    return offset, case.before[:offset] + new + case.before[offset + len(old) :]
