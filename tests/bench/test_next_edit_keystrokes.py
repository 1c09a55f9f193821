"""bench next-edit's editor side: positions, typing as incremental changes, applying the answer."""

from __future__ import annotations

from bench.next_edit.keystrokes import (
    Change,
    apply_changes,
    apply_edits,
    changed_span,
    keystrokes,
    offset_at,
    position_at,
)


def test_positions_count_utf16_code_units() -> None:
    text = "ab\n\U0001f600x\ny"
    assert position_at(text, 0) == (0, 0)
    assert position_at(text, 4) == (1, 2)  # after the emoji: one character, two code units
    assert position_at(text, 5) == (1, 3)
    assert position_at(text, 7) == (2, 1)
    assert offset_at(text, (1, 2)) == 4
    assert offset_at(text, (1, 3)) == 5
    assert offset_at(text, (1, 99)) == 5
    assert offset_at(text, (9, 0)) == len(text)


def test_the_changed_span_is_the_smallest_replacement() -> None:
    assert changed_span("foo(a, b)", "foo(a, c)") == (7, 8, "c")
    assert changed_span("abc", "abc") == (3, 3, "")
    assert changed_span("aaa", "aaaa") == (3, 3, "a")


def test_an_edit_is_typed_as_a_deletion_then_at_most_three_chunks() -> None:
    old = "x = compute(value)\n"
    new = "x = compute(new_value, 2)\n"
    changes = keystrokes(old, new)
    assert changes == [
        Change((0, 12), (0, 17), ""),
        Change((0, 12), (0, 12), "new_"),
        Change((0, 16), (0, 16), "valu"),
        Change((0, 20), (0, 20), "e, 2"),
    ]
    assert apply_changes(old, changes) == new
    assert keystrokes(old, old) == []


def test_the_edits_of_one_answer_all_refer_to_the_text_before_them() -> None:
    text = "a = 1\nb = 2\n"
    edits = [Change((0, 4), (0, 5), "10"), Change((1, 4), (1, 5), "20")]
    assert apply_edits(text, edits) == "a = 10\nb = 20\n"
