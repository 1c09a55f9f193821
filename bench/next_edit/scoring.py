"""How ``codedraft bench next-edit`` scores a prediction: pure functions of whole file texts.

Every function takes ``current`` (the file when the prediction was asked for), ``predicted`` (current
with the answer's edits applied; == current when the server stayed quiet) and the truth: ``truth``
(the file after every remaining change of the commit; == current when nothing is left) and, where it
says so, ``nearest`` (current with only the commit's remaining block nearest the cursor applied).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter

from bench.next_edit.cases import Block, apply_blocks, blocks_between, code_name_offsets, lines_of

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
_CODE_TOKEN = re.compile(r"\w+|[^\w\s]")

Change = tuple[int, int, str, str]
"""A token-level change: tokens ``[start, end)`` of the base text became the text ``new`` (the old
text is kept too, so that two changes of the same tokens to different text differ)."""


def nearest_block(current: str, truth: str, cursor_line: int) -> str:
    """``current`` with only the block of ``current`` -> ``truth`` nearest ``cursor_line`` applied
    (the first of equally near ones); ``current`` when the texts are equal."""
    blocks = blocks_between(current, truth)
    if not blocks:
        return current

    def distance(block: Block) -> int:
        last = max(block.start, block.end - 1)
        return (
            0
            if block.start <= cursor_line <= last
            else min(abs(cursor_line - block.start), abs(cursor_line - last))
        )

    return apply_blocks(current, [min(blocks, key=distance)])


def is_exact(current: str, predicted: str, nearest: str, truth: str) -> bool:
    """The prediction is an edit and it is the true next one: the file equals the file after the
    true block nearest the cursor, or after all the remaining changes."""
    return predicted != current and predicted in (nearest, truth)


def line_changes(base: str, other: str) -> Counter[str]:
    """The lines ``base`` -> ``other`` removes ("-" + line) and adds ("+" + line), without line ends,
    counted; blank lines count too."""
    old = [line.rstrip("\n") for line in lines_of(base)]
    new = [line.rstrip("\n") for line in lines_of(other)]
    changes: Counter[str] = Counter()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            changes.update("-" + line for line in old[i1:i2])
            changes.update("+" + line for line in new[j1:j2])
    return changes


def line_f1(current: str, predicted: str, truth: str) -> float:
    """F1 of the changed lines of ``current`` -> ``predicted`` against ``current`` -> ``truth``; 1.0
    when both change nothing, 0.0 when exactly one does."""
    guessed, true = line_changes(current, predicted), line_changes(current, truth)
    if not guessed and not true:
        return 1.0
    common = sum((guessed & true).values())
    return 2 * common / (sum(guessed.values()) + sum(true.values()))


def line_precision(current: str, predicted: str, truth: str) -> float | None:
    """The share of the prediction's changed lines that the truth changes the same way; None for
    no prediction."""
    guessed, true = line_changes(current, predicted), line_changes(current, truth)
    if not guessed:
        return None
    return sum((guessed & true).values()) / sum(guessed.values())


def is_revert(user_before: str, current: str, predicted: str) -> bool:
    """The prediction undoes (some of) the user's own last edit ``user_before`` -> ``current``: it
    removes a line the user added and adds back a line the user removed (either side that the user's
    edit did not have is not required). Blank lines do not count."""
    if predicted == current:
        return False
    if predicted == user_before:
        return True
    user = {line for line in line_changes(user_before, current) if line[1:].strip()}
    guess = {line for line in line_changes(current, predicted) if line[1:].strip()}
    added = {line[1:] for line in user if line[0] == "+"}
    removed = {line[1:] for line in user if line[0] == "-"}
    takes_back = any(line[0] == "-" and line[1:] in added for line in guess)
    restores = any(line[0] == "+" and line[1:] in removed for line in guess)
    return (takes_back or not added) and (restores or not removed) and bool(added or removed)


def token_changes(base: str, other: str) -> set[Change]:
    """The token-level changes of ``base`` -> ``other``: one per token where equally long runs of
    tokens were replaced (a rename changes one token per occurrence), one per run elsewhere."""
    old, new = _TOKEN.findall(base), _TOKEN.findall(other)
    changes: set[Change] = set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "replace" and i2 - i1 == j2 - j1:
            changes.update(
                (i1 + k, i1 + k + 1, old[i1 + k], new[j1 + k])
                for k in range(i2 - i1)
                if old[i1 + k] != new[j1 + k]
            )
        elif tag != "equal":
            changes.add((i1, i2, "".join(old[i1:i2]), "".join(new[j1:j2])))
    return changes


def code_token_distance(a: str, b: str) -> int:
    """Tokens removed plus tokens added from ``a`` to ``b`` (``difflib``'s alignment), whitespace
    left out: a change the commit also re-flowed with a formatter is the same change."""
    old, new = _CODE_TOKEN.findall(a), _CODE_TOKEN.findall(b)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return sum(i2 - i1 + j2 - j1 for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")


def is_on_the_way(current: str, edited: str, truth: str) -> bool:
    """An edit ``current`` -> ``edited`` that changes something and only what the way to ``truth``
    changes: its own distance and the distance left add up to the distance there was."""
    step = code_token_distance(current, edited)
    return step > 0 and step + code_token_distance(edited, truth) == code_token_distance(current, truth)


def rename_counts(current: str, predicted: str, truth: str) -> tuple[int, int, int]:
    """(right, predicted, true): token changes of ``current`` -> ``predicted`` that the truth makes
    too, all the prediction's token changes, and all the truth's (each renamed occurrence is one)."""
    guessed, true = token_changes(current, predicted), token_changes(current, truth)
    return len(guessed & true), len(guessed), len(true)


def percentile(values: list[float], q: float) -> float | None:
    """The ``q`` quantile of ``values`` (nearest rank); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def code_rename_counts(current: str, predicted: str, truth: str, old: str) -> tuple[int, int]:
    """(right, true) as :func:`rename_counts` gives them, counting only the truth's renames of
    ``old`` where it is code (not in a string or comment: the server proposes identifiers only)."""
    starts = [match.start() for match in _TOKEN.finditer(current)]
    code = code_name_offsets(current, old)
    true = {c for c in token_changes(current, truth) if c[1] == c[0] + 1 and starts[c[0]] in code}
    return len(token_changes(current, predicted) & true), len(true)
