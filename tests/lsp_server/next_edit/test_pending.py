"""Pending predicted edits move with the user's changes, go when touched, and are recognised when the
editor applies one."""

from __future__ import annotations

from lsp_server.next_edit.diffs import changed_span
from lsp_server.next_edit.pending import PendingEdits, offset_of, position_of

TEXT = "def f(count):\n    total = count + 1\n    return count\n"


def _rename_edits(text: str) -> list[tuple[str, int, int, str, str]]:
    starts = [i for i in range(len(text)) if text.startswith("count", i)][1:]
    return [("a.py", s, s + 5, "count", "n") for s in starts]


def test_changed_span_finds_the_differing_characters() -> None:
    assert changed_span("abcdef", "abXYef") == (2, 4, 4)
    assert changed_span("abc", "abc") == (3, 3, 3)
    assert changed_span("a" * 10_000 + "b", "a" * 10_000 + "cb") == (10_000, 10_000, 10_001)
    assert changed_span(b"width = 1", b"wide = 1") == (3, 5, 4)  # bytes too (renames diff UTF-8)


def test_positions_and_offsets_round_trip_in_utf16() -> None:
    text = "x = '😀'\ny = 1\n"
    assert position_of(text, text.index("'", 5)) == (0, 7)  # the emoji is two UTF-16 units
    assert offset_of(text, (0, 7)) == text.index("'", 5)
    assert position_of(text, text.index("y")) == (1, 0)


def test_an_edit_elsewhere_moves_the_pending_edits_after_it() -> None:
    pending = PendingEdits()
    pending.add(_rename_edits(TEXT), "rename")
    after = TEXT.replace("total = ", "total_sum = ")
    assert pending.changed("a.py", TEXT, after) is None
    standing = pending.offered(lambda path: after)
    assert [(e.start, e.end) for e in standing] == [
        (after.index("count +"), after.index("count +") + 5),
        (
            after.rindex("count"),
            after.rindex("count") + 5,
        ),
    ]


def test_an_edit_that_touches_a_pending_edit_drops_it() -> None:
    pending = PendingEdits()
    pending.add(_rename_edits(TEXT), "rename")
    after = TEXT.replace("count + 1", "cnt + 1")
    assert pending.changed("a.py", TEXT, after) is None
    assert [e.old for e in pending.offered(lambda path: after)] == ["count"]
    assert len(pending) == 1


def test_applying_a_pending_edit_is_recognised_and_it_is_no_longer_offered() -> None:
    pending = PendingEdits()
    first, second = pending.add(_rename_edits(TEXT), "rename")
    after = first.applied_to(TEXT)
    assert pending.changed("a.py", TEXT, after) == first
    (left,) = pending.offered(lambda path: after)
    assert left.id == second.id and after[left.start : left.end] == "count"


def test_an_edit_whose_text_changed_on_disk_is_not_offered() -> None:
    pending = PendingEdits()
    pending.add([("b.py", 0, 5, "count", "n")], "rename")
    assert pending.offered(lambda path: "total = 1\n") == []
    assert pending.offered(lambda path: None) == []


def test_dismissing_an_edit_drops_its_whole_prediction_and_a_new_prediction_replaces_the_old() -> None:
    pending = PendingEdits()
    first, _ = pending.add(_rename_edits(TEXT), "rename")
    pending.dismissed(first.id)
    assert len(pending) == 0
    pending.add(_rename_edits(TEXT), "rename")
    (only,) = pending.add([("a.py", 0, 3, "def", "async def")], "model")
    assert pending.offered(lambda path: TEXT) == [only]
