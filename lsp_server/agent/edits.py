"""The edit in a model's reply: search/replace blocks, a unified diff, or a code block for the target.

Parsing never trusts the reply: malformed output raises :class:`MalformedEdit` with a reason the
next prompt can quote, and an edit that does not fit the file raises :class:`EditDoesNotApply`. The
files an edit changed are held to the proposal check's floor (:func:`changes_problem`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from indexer.languages import language_for_path
from lsp_server.rewrite.proposal_check import Proposal, proposal_problem
from lsp_server.rewrite.reply import code_from_reply, keep_indentation

SEARCH, DIVIDER, REPLACE = "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE"
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")


class MalformedEdit(ValueError):
    """The reply holds no edit that can be read."""


class EditDoesNotApply(ValueError):
    """The edit names text that is not in the file (or is there more than once)."""


@dataclass(frozen=True)
class Replacement:
    """Replace ``search`` (exactly once) by ``replace`` in ``path``; an empty ``search`` creates the file."""

    path: str
    search: str
    replace: str


@dataclass(frozen=True)
class Target:
    """Where a fix is wanted: a file and its lines ``first``..``last`` (from 0, inclusive)."""

    path: str
    first: int
    last: int


def parse_edit(reply: str, target: Target, text: str) -> list[Replacement]:
    """The replacements a reply proposes; ``text`` is the target file's current text."""
    if SEARCH in reply:
        return parse_search_replace(reply, target.path)
    if re.search(r"^@@ -\d", reply, re.MULTILINE) and re.search(r"^(---|\+\+\+) ", reply, re.MULTILINE):
        return parse_unified_diff(reply)
    code = code_from_reply(reply)
    if code is None:
        raise MalformedEdit("the reply holds no search/replace block, diff or code block")
    lines = text.split("\n")
    if not 0 <= target.first <= target.last < len(lines):
        raise MalformedEdit(f"lines {target.first + 1}-{target.last + 1} are not in {target.path}")
    selected = "\n".join(lines[target.first : target.last + 1])
    return [Replacement(target.path, selected, keep_indentation(selected, code))]


def corrected_line(reply: str, target: Target, text: str) -> str:
    """The corrected target line a reply to the one-line form carries, at the line's indentation.

    A small model asked for one line often writes more (the function, or the whole file, with the one
    line changed): the line that is not in the file is taken then, when there is exactly one.
    """
    lines = text.split("\n")
    if not 0 <= target.first == target.last < len(lines):
        raise MalformedEdit(f"line {target.first + 1} is not in {target.path}")
    code = code_from_reply(reply)
    written = [line for line in (code or "").split("\n") if line.strip()]
    if not written:
        raise MalformedEdit("the reply holds no line of code")
    if len(written) > 1:
        known = {line.strip() for line in lines}
        written = [line for line in written if line.strip() not in known]
        if len(written) != 1:
            raise MalformedEdit(f"the reply changes {len(written)} lines; one corrected line was asked for")
    original = lines[target.first]
    return original[: len(original) - len(original.lstrip())] + written[0].strip()


def line_replacement(target: Target, text: str, line: str) -> Replacement:
    """The target line of ``text`` replaced by ``line``, with the lines around it in the search, so it
    is unique where the same line occurs twice in the file."""
    lines = text.split("\n")
    above, below = lines[max(0, target.first - 1) : target.first], lines[target.first + 1 : target.first + 2]
    return Replacement(
        target.path, "\n".join([*above, lines[target.first], *below]), "\n".join([*above, line, *below])
    )


def parse_search_replace(reply: str, default_path: str) -> list[Replacement]:
    """Blocks of ``path`` / ``<<<<<<< SEARCH`` / old / ``=======`` / new / ``>>>>>>> REPLACE``."""
    lines = reply.split("\n")
    found: list[Replacement] = []
    index = 0
    while index < len(lines):
        if lines[index].strip() != SEARCH:
            index += 1
            continue
        path = _path_before(lines, index) or default_path
        try:
            divider = next(i for i in range(index + 1, len(lines)) if lines[i].strip() == DIVIDER)
            end = next(i for i in range(divider + 1, len(lines)) if lines[i].strip() == REPLACE)
        except StopIteration:
            raise MalformedEdit(f"a SEARCH block for {path} is not closed by ======= and REPLACE") from None
        found.append(
            Replacement(path, "\n".join(lines[index + 1 : divider]), "\n".join(lines[divider + 1 : end]))
        )
        index = end + 1
    if not found:
        raise MalformedEdit("no complete search/replace block")
    return found


def _path_before(lines: list[str], index: int) -> str | None:
    for line in reversed(lines[max(0, index - 3) : index]):
        stripped = line.strip().strip("`*").strip()
        if stripped.startswith(("```", "~~~")) or not stripped:
            continue
        if " " not in stripped and ("." in stripped or "/" in stripped):
            return stripped.removeprefix("a/").removeprefix("b/")
        return None
    return None


def parse_unified_diff(reply: str) -> list[Replacement]:
    """A unified diff as replacements: each hunk's old lines (context and removed) by its new lines."""
    found: list[Replacement] = []
    path: str | None = None
    old: list[str] | None = None
    new: list[str] = []

    def close_hunk() -> None:
        if old is not None and path is not None and (old or new):
            found.append(Replacement(path, "\n".join(old), "\n".join(new)))

    for line in reply.split("\n"):
        if line.startswith("+++ "):
            close_hunk()
            old = None
            name = line[4:].split("\t")[0].strip()
            if name == "/dev/null":
                raise MalformedEdit("the diff deletes a file; fixes may not delete files")
            path = name.removeprefix("b/")
        elif line.startswith("--- "):
            close_hunk()
            old = None
        elif _HUNK.match(line):
            close_hunk()
            if path is None:
                raise MalformedEdit("a diff hunk comes before any +++ file header")
            old, new = [], []
        elif old is not None:
            if line.startswith("-"):
                old.append(line[1:])
            elif line.startswith("+"):
                new.append(line[1:])
            elif line.startswith(" ") or line == "":
                old.append(line[1:])
                new.append(line[1:])
            elif line.startswith("\\"):
                continue
            else:
                close_hunk()
                old = None
    close_hunk()
    if not found:
        raise MalformedEdit("the diff has no hunks")
    return [_trim_blank_tail(r) for r in found]


def _trim_blank_tail(replacement: Replacement) -> Replacement:
    # a reply's trailing blank line reads as an empty context line; it is not part of the hunk
    search, replace = replacement.search, replacement.replace
    while search.endswith("\n") and replace.endswith("\n"):
        search, replace = search[:-1], replace[:-1]
    return Replacement(replacement.path, search, replace)


def apply_replacement(text: str | None, replacement: Replacement) -> str:
    """``text`` with the replacement made; tolerates trailing whitespace differences in ``search``."""
    if text is None:
        if replacement.search.strip():
            raise EditDoesNotApply(f"{replacement.path} does not exist")
        return replacement.replace + ("\n" if not replacement.replace.endswith("\n") else "")
    if not replacement.search.strip():
        raise EditDoesNotApply(f"an empty SEARCH for {replacement.path}, which already exists")
    count = text.count(replacement.search)
    if count == 1:
        return text.replace(replacement.search, replacement.replace, 1)
    if count > 1:
        raise EditDoesNotApply(f"the SEARCH text occurs {count} times in {replacement.path}; give more lines")
    lines = text.split("\n")
    wanted = [line.rstrip() for line in replacement.search.split("\n")]
    starts = [
        i
        for i in range(len(lines) - len(wanted) + 1)
        if [line.rstrip() for line in lines[i : i + len(wanted)]] == wanted
    ]
    if len(starts) != 1:
        raise EditDoesNotApply(
            f"the SEARCH text is not in {replacement.path}"
            if not starts
            else f"the SEARCH text occurs {len(starts)} times in {replacement.path}; give more lines"
        )
    start = starts[0]
    return "\n".join([*lines[:start], replacement.replace, *lines[start + len(wanted) :]])


def changes_problem(
    changes: dict[str, tuple[str | None, str]], target: Target, instruction: str
) -> str | None:
    """The first problem of an agent's edit to several files (``path: (before, after)``; a new file,
    with no ``before``, is not checked), naming the file; None when all may be offered."""
    for path, (before, after) in sorted(changes.items()):
        if before is None:
            continue
        selection = (target.first, target.last) if path == target.path else None
        problem = proposal_problem(Proposal(before, after, language_for_path(path), instruction, selection))
        if problem is not None:
            return f"{path}: {problem}"
    return None
