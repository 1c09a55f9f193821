"""The edit history: bursts coalesce, undos remove, accepted suggestions are marked, bounds hold, and
a snapshot that does not follow the last one drops the file's edits instead of sending a wrong diff."""

from __future__ import annotations

from lsp_server.next_edit.diffs import Hunk, hunks, unified_diff
from lsp_server.next_edit.history import ContentChange, EditHistory

TEXT = "def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))\n"


def _typed(history: EditHistory, path: str, texts: list[str], start: float, version: int = 1) -> int:
    """Feeds ``texts`` as consecutive versions half a second apart; returns the last version."""
    for offset, text in enumerate(texts):
        version += 1
        history.change(path, version, text, start + offset * 0.5)
    return version


def test_a_diff_has_path_headers_and_context_lines() -> None:
    after = TEXT.replace("w * h", "w * h * 1")
    assert unified_diff("geo.py", TEXT, after) == (
        "--- a/geo.py\n+++ b/geo.py\n@@ -1,5 +1,5 @@\n def area(w, h):\n-    return w * h\n"
        "+    return w * h * 1\n \n \n print(area(2, 3))\n"
    )
    assert hunks(TEXT, after) == [
        Hunk(
            0,
            "def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))",
            0,
            "def area(w, h):\n    return w * h * 1\n\n\nprint(area(2, 3))",
        )
    ]
    assert unified_diff("geo.py", TEXT, TEXT) == ""


def test_a_burst_of_typing_in_one_place_is_one_edit() -> None:
    history = EditHistory()
    history.open("geo.py", 1, TEXT)
    _typed(history, "geo.py", [TEXT.replace("(w, h)", f"(w, h{', d'[:n]})") for n in (1, 2, 3)], 10.0)
    [edit] = history.edits()
    assert (edit.path, edit.before, edit.after, edit.at) == (
        "geo.py",
        TEXT,
        TEXT.replace("(w, h)", "(w, h, d)"),
        11.0,
    )


def test_a_pause_or_a_distant_line_starts_a_new_edit() -> None:
    history = EditHistory()
    history.open("geo.py", 1, TEXT)
    first = TEXT.replace("(w, h)", "(w, h, d)")
    second = first.replace("w * h", "w * h * d")  # next line, but after a pause
    third = second.replace("(2, 3)", "(2, 3, 4)")  # at once, but three lines further down
    history.change("geo.py", 2, first, 10.0)
    history.change("geo.py", 3, second, 13.0)
    history.change("geo.py", 4, third, 13.5)
    assert [(e.before, e.after) for e in history.edits()] == [(TEXT, first), (first, second), (second, third)]


def test_an_edit_in_another_file_ends_the_burst() -> None:
    history = EditHistory()
    history.open("a.py", 1, "x = 1\n")
    history.open("b.py", 1, "y = 1\n")
    history.change("a.py", 2, "x = 12\n", 1.0)
    history.change("b.py", 2, "y = 12\n", 1.2)
    history.change("a.py", 3, "x = 123\n", 1.4)
    assert [(e.path, e.before, e.after) for e in history.edits()] == [
        ("a.py", "x = 1\n", "x = 12\n"),
        ("b.py", "y = 1\n", "y = 12\n"),
        ("a.py", "x = 12\n", "x = 123\n"),
    ]


def test_an_undo_removes_the_edit_it_undoes() -> None:
    history = EditHistory()
    history.open("geo.py", 1, TEXT)
    history.change("geo.py", 2, TEXT.replace("area", "size"), 1.0)
    history.change("geo.py", 3, TEXT.replace("area", "size").replace("2, 3", "4, 5"), 9.0)
    history.change("geo.py", 4, TEXT.replace("area", "size"), 20.0)  # undo of the second edit
    assert [e.after for e in history.edits()] == [TEXT.replace("area", "size")]
    history.change("geo.py", 5, TEXT, 30.0)  # and of the first
    assert history.edits() == []


def test_typing_then_deleting_the_same_text_leaves_no_edit() -> None:
    history = EditHistory()
    history.open("a.py", 1, "x = 1\n")
    _typed(history, "a.py", ["x = 1 \n", "x = 1 +\n", "x = 1 \n", "x = 1\n"], 0.0)
    assert history.edits() == []


def test_an_applied_suggestion_is_its_own_edit_marked_accepted() -> None:
    history = EditHistory()
    history.open("a.py", 1, "x = 1\ny = x\n")
    history.change("a.py", 2, "z = 1\ny = x\n", 1.0)
    history.expect_accepted("a.py", "z = 1\ny = z\n")
    history.change("a.py", 3, "z = 1\ny = z\n", 1.2)
    history.change("a.py", 4, "z = 1\ny = z + 1\n", 1.4)
    assert [(e.after, e.accepted) for e in history.edits()] == [
        ("z = 1\ny = x\n", False),
        ("z = 1\ny = z\n", True),
        ("z = 1\ny = z + 1\n", False),
    ]


def test_the_history_keeps_the_newest_edits_within_its_bounds() -> None:
    history = EditHistory()
    text = "\n".join(f"line{i} = {i}" for i in range(200)) + "\n"
    history.open("a.py", 1, text)
    for n in range(20):  # far apart in lines and time: twenty edits
        new = text.replace(f"line{n * 10} = ", f"line{n * 10} = -")
        history.change("a.py", n + 2, new, n * 10.0)
        text = new
    assert [e.at for e in history.edits()] == [n * 10.0 for n in range(5, 20)]
    small = EditHistory(max_tokens=100)
    small.open("a.py", 1, "a = 1\n")
    small.change("a.py", 2, "a = 2\n", 0.0)
    small.change("a.py", 3, "a = 3\n", 10.0)
    one = small.estimate.tokens(small.edits()[-1].diff)
    assert one == 14  # 48 characters of diff at 3.5 per token
    assert [e.after for e in small.edits()] == ["a = 2\n", "a = 3\n"]
    smaller = EditHistory(max_tokens=2 * one - 1)
    smaller.open("a.py", 1, "a = 1\n")
    smaller.change("a.py", 2, "a = 2\n", 0.0)
    smaller.change("a.py", 3, "a = 3\n", 10.0)
    assert [e.after for e in smaller.edits()] == ["a = 3\n"]


def test_content_changes_apply_in_utf16_columns() -> None:
    history = EditHistory()
    history.open("a.py", 1, "s = '😀'\nx = 1\n")
    assert history.apply_changes("a.py", 2, [ContentChange("!", ((0, 7), (0, 7)))], 1.0)
    assert history.apply_changes("a.py", 3, [ContentChange("2", ((1, 4), (1, 5)))], 1.2)
    [edit] = history.edits()
    assert edit.after == "s = '😀!'\nx = 2\n"


def test_changes_that_do_not_follow_drop_the_file_and_start_again() -> None:
    history = EditHistory()
    history.open("a.py", 1, "a = 1\n")
    history.open("b.py", 1, "b = 1\n")
    history.change("a.py", 2, "a = 2\n", 0.0)
    history.change("b.py", 2, "b = 2\n", 10.0)
    # A version out of order: a.py's edits go, b.py's stay.
    assert not history.apply_changes("a.py", 2, [ContentChange("9", ((0, 4), (0, 5)))], 20.0)
    assert [e.path for e in history.edits()] == ["b.py"]
    # Until a whole text arrives, a.py takes no changes; then it is tracked from that text.
    assert not history.apply_changes("a.py", 3, [ContentChange("9", ((0, 4), (0, 5)))], 21.0)
    history.change("a.py", 4, "a = 4\n", 22.0)
    history.change("a.py", 5, "a = 5\n", 30.0)
    assert [(e.path, e.before, e.after) for e in history.edits()] == [
        ("b.py", "b = 1\n", "b = 2\n"),
        ("a.py", "a = 4\n", "a = 5\n"),
    ]
    # A range past the last line does not apply either.
    assert not history.apply_changes("b.py", 3, [ContentChange("x", ((5, 0), (5, 0)))], 31.0)
    assert [e.path for e in history.edits()] == ["a.py"]


def test_a_file_changed_on_disk_drops_its_edits() -> None:
    history = EditHistory()
    history.open("a.py", 1, "a = 1\n")
    history.change("a.py", 2, "a = 2\n", 0.0)
    history.reload("a.py", 3, "a = 1000\n")
    history.change("a.py", 4, "a = 1001\n", 10.0)
    assert [(e.before, e.after) for e in history.edits()] == [("a = 1000\n", "a = 1001\n")]
    # A stale version with a different text is a reload too; the same text is only a repeat.
    history.change("a.py", 4, "a = 1001\n", 11.0)
    assert len(history.edits()) == 1
    history.change("a.py", 3, "other\n", 12.0)
    assert history.edits() == []


def test_a_smaller_budget_sends_only_the_newest_edits_that_fit() -> None:
    history = EditHistory()
    text = "".join(f"line_{n} = {n}\n" for n in range(40))
    history.open("a.py", 1, text)
    for version, n in enumerate(range(0, 40, 10), start=2):  # four edits far apart: four diffs
        text = text.replace(f"line_{n} = {n}\n", f"line_{n} = {n + 1000}\n")
        history.change("a.py", version, text, now=10.0 * version)
    every = history.edits()
    assert len(every) == 4
    one = history.estimate.tokens(every[-1].diff)
    assert history.edits(one) == every[-1:]
    assert history.edits(one - 1) == []


def test_a_prompts_history_keeps_its_start_until_it_no_longer_fits() -> None:
    """Each edit in its own file (one edit each), 10 s apart; the prompt's history only grows at its
    end while it fits, then restarts from the newest edits filling half the budget."""
    history = EditHistory()
    paths = [f"m{n}.py" for n in range(8)]
    for path in paths:
        history.open(path, 1, TEXT)
    size = history.estimate.tokens(unified_diff("m0.py", TEXT, TEXT.replace("(2, 3)", "(2, 4)")))
    budget = 4 * size  # four edits fit, two fill half of it
    shown: list[list[str]] = []
    for number, path in enumerate(paths):
        history.change(path, 2, TEXT.replace("(2, 3)", "(2, 4)"), 10.0 * number)
        shown.append([edit.path for edit in history.prompt_edits(budget)])
    assert shown == [
        ["m0.py"],
        ["m0.py", "m1.py"],
        ["m0.py", "m1.py", "m2.py"],
        ["m0.py", "m1.py", "m2.py", "m3.py"],
        ["m3.py", "m4.py"],  # five no longer fit: the newest that fill half
        ["m3.py", "m4.py", "m5.py"],
        ["m3.py", "m4.py", "m5.py", "m6.py"],
        ["m6.py", "m7.py"],
    ]
    # edits() still slides: the newest four
    assert [edit.path for edit in history.edits(budget)] == ["m4.py", "m5.py", "m6.py", "m7.py"]
