"""A prediction is shown only when it changes something, does not undo or rewrite the user's last
edit, and leaves the file parsing where it did."""

from __future__ import annotations

from lsp_server.next_edit.checks import (
    BREAKS_PARSE,
    LAYOUT_ONLY,
    NO_CHANGE,
    REVERTS,
    TOUCHES_EDIT,
    layout_only,
    quiet_reason,
)
from lsp_server.next_edit.diffs import FileEdit

BEFORE = "def f(count):\n    return count\n"
AFTER = "def f(total):\n    return count\n"
LAST = FileEdit("a.py", BEFORE, AFTER, 0.0)


def test_a_prediction_that_changes_nothing_stays_quiet() -> None:
    assert quiet_reason("python", AFTER, AFTER, LAST) == NO_CHANGE


def test_a_prediction_that_undoes_the_last_edit_stays_quiet() -> None:
    assert quiet_reason("python", AFTER, BEFORE, LAST) == REVERTS


def test_a_prediction_that_rewrites_what_was_just_typed_stays_quiet() -> None:
    assert quiet_reason("python", AFTER, AFTER.replace("total", "tot"), LAST) == TOUCHES_EDIT


def test_a_prediction_beside_the_last_edit_is_shown() -> None:
    assert quiet_reason("python", AFTER, AFTER.replace("return count", "return total"), LAST) is None
    # Adding right after what was typed is continuing it, not rewriting it.
    assert quiet_reason("python", AFTER, AFTER.replace("total)", "total, step)"), LAST) is None


def test_a_prediction_that_breaks_the_parse_stays_quiet() -> None:
    assert quiet_reason("python", AFTER, AFTER.replace("return count", "return (count"), LAST) == BREAKS_PARSE
    # A file that did not parse may stay as broken as it was (one error, then one error).
    broken = "def f(total:\n    return count\n"
    assert quiet_reason("python", broken, broken.replace("count", "total"), None) is None


def test_a_language_without_grammar_is_not_parse_checked() -> None:
    assert quiet_reason("plaintext", "a (\n", "a ((\n", None) is None


def test_a_prediction_that_changes_only_layout_stays_quiet() -> None:
    text = "def f(count):\n    items = [\n        count,\n    ]\n\n\ndef g():\n    pass\n"
    assert quiet_reason("python", text, text.replace("\n\n\ndef g", "\ndef g"), None) == LAYOUT_ONLY
    assert quiet_reason("python", text, text.replace("    ]", "     ]"), None) == LAYOUT_ONLY
    assert quiet_reason("python", text, text.replace("items = [", "items  =  ["), None) == LAYOUT_ONLY
    # A word changed, or a re-indent by whole steps (the body of a new block): shown.
    assert quiet_reason("python", text, text.replace("count,", "count + 1,"), None) is None
    wrapped = "def f(count):\n    with lock:\n    return count\n"
    assert quiet_reason(None, wrapped, wrapped.replace("    return", "        return"), None) is None
    assert layout_only(wrapped, wrapped.replace("    return", "      return"))  # half a step
