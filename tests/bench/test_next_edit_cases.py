"""bench next-edit's cases: blocks, renames, the committed data file."""

from __future__ import annotations

from pathlib import Path

from bench.next_edit.cases import (
    Block,
    Case,
    apply_blocks,
    blocks_between,
    code_name_offsets,
    lines_of,
    load_cases,
    rename_of,
    renamed_offsets,
    save_cases,
    user_rename,
)
from bench.next_edit.mine import classify

BEFORE = "a = 1\nb = 2\nc = 3\nd = 4\n"


def test_lines_keep_their_ends_and_a_last_line_without_one() -> None:
    assert lines_of("x\ny") == ["x\n", "y"]
    assert lines_of("x\n") == ["x\n"]
    assert lines_of("") == []


def test_blocks_are_the_changed_runs_in_file_order_and_rebuild_the_after_text() -> None:
    after = "a = 1\nB = 2\nc = 3\nd = 4\ne = 5\n"
    blocks = blocks_between(BEFORE, after)
    assert blocks == (Block(1, 2, ("B = 2\n",)), Block(4, 4, ("e = 5\n",)))
    assert apply_blocks(BEFORE, blocks) == after
    assert apply_blocks(BEFORE, blocks[:1]) == "a = 1\nB = 2\nc = 3\nd = 4\n"
    assert blocks_between(BEFORE, BEFORE) == ()


def test_a_rename_replaces_one_identifier_with_one_other_at_two_places_or_more() -> None:
    assert rename_of("x = f(x)\n", "y = f(y)\n") == ("x", "y")
    assert rename_of("x = f(1)\n", "y = f(1)\n") is None  # one place
    assert rename_of("x = f(x)\n", "y = g(y)\n") is None  # two pairs
    assert rename_of("x = x or 1\n", "x = x or 2\n") is None  # not an identifier
    assert rename_of("a = True; b = True\n", "a = None; b = None\n") is None  # keywords
    assert rename_of("x = f(x)\n", "y = f(y, 1)\n") is None  # tokens added


def test_the_user_renames_the_first_renamed_occurrence_in_code_not_in_a_comment() -> None:
    before = "# x here\nx = 1\nprint(x)\n"
    after = "# y here\ny = 1\nprint(y)\n"
    case = Case("r", "c", "s", "p.py", "rename", before, blocks_between(before, after), ("x", "y"))
    assert renamed_offsets(before, after) == [2, 9, 21]
    assert code_name_offsets(before, "x") == {9, 21}
    assert user_rename(case) == (9, "# x here\ny = 1\nprint(x)\n")


def test_commits_are_classified_by_the_rules() -> None:
    body = "".join(f"v{i} = {i}\n" for i in range(40))
    assert classify(body, body.replace("v3 =", "w3 =").replace("v30 =", "w30 ="), True) == "multi"
    assert classify(body, body.replace("v3 =", "w3 ="), True) == "silence"
    assert classify(body, body.replace("v3 =", "w3 ="), False) is None  # another .py file changed
    renamed = body + "print(k, k, k)\n"
    assert classify(renamed, renamed.replace("k", "key"), False) == "rename"
    commented = body + "# k, k, k\n"
    assert classify(commented, commented.replace("k", "key"), False) is None  # not code
    assert classify("x = 1\n", "x = 2\n", True) is None  # too small a file


def test_cases_round_trip_through_the_data_file(tmp_path: Path) -> None:
    after = BEFORE.replace("b", "bb").replace("d", "dd")
    case = Case("multi-1", "abc", "subject", "m.py", "multi", BEFORE, blocks_between(BEFORE, after))
    save_cases([case], {"repository": "r"}, tmp_path / "cases.json")
    assert load_cases(tmp_path / "cases.json") == [case]
    assert load_cases(tmp_path / "cases.json")[0].after == after


def test_the_committed_cases_are_sixty_of_the_three_kinds_and_consistent() -> None:
    cases = load_cases()
    assert [sum(c.kind == kind for c in cases) for kind in ("rename", "multi", "silence")] == [20, 30, 10]
    for case in cases:
        assert blocks_between(case.before, case.after) == case.blocks
        if case.kind == "rename":
            assert rename_of(case.before, case.after) == case.rename
        else:
            assert (len(case.blocks) == 1) == (case.kind == "silence")
