"""bench next-edit's scores, on exact small cases."""

from __future__ import annotations

import pytest

from bench.next_edit.scoring import (
    code_rename_counts,
    is_exact,
    is_revert,
    line_changes,
    line_f1,
    line_precision,
    nearest_block,
    percentile,
    rename_counts,
    token_changes,
)

CURRENT = "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\n"
TRUTH = CURRENT.replace("b = 2", "b = 20").replace("f = 6", "f = 60")


def test_the_nearest_block_is_the_true_change_closest_to_the_cursor() -> None:
    assert nearest_block(CURRENT, TRUTH, 0) == CURRENT.replace("b = 2", "b = 20")
    assert nearest_block(CURRENT, TRUTH, 4) == CURRENT.replace("f = 6", "f = 60")
    assert nearest_block(CURRENT, CURRENT, 3) == CURRENT


def test_exact_means_the_nearest_true_change_or_all_of_them_and_never_silence() -> None:
    nearest = nearest_block(CURRENT, TRUTH, 0)
    assert is_exact(CURRENT, nearest, nearest, TRUTH)
    assert is_exact(CURRENT, TRUTH, nearest, TRUTH)
    assert not is_exact(CURRENT, CURRENT.replace("f = 6", "f = 60"), nearest, TRUTH)
    assert not is_exact(CURRENT, CURRENT, CURRENT, CURRENT)


def test_line_changes_count_removed_and_added_lines() -> None:
    assert line_changes(CURRENT, TRUTH) == {"-b = 2": 1, "+b = 20": 1, "-f = 6": 1, "+f = 60": 1}


def test_line_f1_and_precision_against_the_true_change() -> None:
    half = CURRENT.replace("b = 2", "b = 20")
    assert line_f1(CURRENT, half, TRUTH) == pytest.approx(2 * 2 / (2 + 4))
    assert line_f1(CURRENT, TRUTH, TRUTH) == 1.0
    assert line_f1(CURRENT, CURRENT, CURRENT) == 1.0
    assert line_f1(CURRENT, CURRENT, TRUTH) == 0.0
    assert line_f1(CURRENT, half, CURRENT) == 0.0
    wrong = CURRENT.replace("b = 2", "b = 3")
    assert line_precision(CURRENT, wrong, TRUTH) == 0.5  # "-b = 2" is right, "+b = 3" is not
    assert line_precision(CURRENT, CURRENT, TRUTH) is None


def test_a_revert_takes_back_the_users_line_or_restores_what_the_user_removed() -> None:
    before = "x = 1\ny = 2\n"
    edited = "x = 1\ny = 3\n"
    assert is_revert(before, edited, before)
    assert is_revert(before, edited, "x = 0\ny = 2\n")  # undoes the user's line, changes another
    assert not is_revert(before, edited, "x = 0\ny = 3\n")
    assert not is_revert(before, edited, edited)
    inserted = "x = 1\nz = 9\ny = 2\n"
    assert is_revert(before, inserted, "x = 1\ny = 2\nw = 0\n")  # removes the inserted line
    assert not is_revert(before, inserted, "x = 1\nz = 9\ny = 2\nw = 0\n")
    deleted = "x = 1\n"
    assert is_revert(before, deleted, "x = 1\ny = 2\n")
    assert not is_revert(before, deleted, "x = 1\nq = 5\n")


def test_token_changes_count_each_renamed_occurrence_apart() -> None:
    assert token_changes("f(x, x)\n", "f(y, y)\n") == {(2, 3, "x", "y"), (5, 6, "x", "y")}
    assert token_changes("f(x)\n", "f(x, z)\n") == {(3, 3, "", ", z")}


def test_rename_counts_are_right_predicted_and_true_occurrences() -> None:
    current = "y = 1\nprint(x)\nreturn x + x\n"  # the user renamed the first x
    truth = "y = 1\nprint(y)\nreturn y + y\n"
    assert rename_counts(current, truth, truth) == (3, 3, 3)
    assert rename_counts(current, "y = 1\nprint(y)\nreturn x + x\n", truth) == (1, 1, 3)
    assert rename_counts(current, "y = 1\nprint(y)\nreturn x + z\n", truth) == (1, 2, 3)
    assert rename_counts(current, current, truth) == (0, 0, 3)


def test_percentiles_by_nearest_rank() -> None:
    assert percentile([3.0, 1.0, 2.0, 10.0], 0.5) == 3.0
    assert percentile([3.0, 1.0, 2.0, 10.0], 0.9) == 10.0
    assert percentile([], 0.5) is None


def test_code_rename_counts_leave_out_the_truths_renames_in_comments_and_strings() -> None:
    current = "y = 1  # x\nprint(x, 'x')\n"
    truth = "y = 1  # y\nprint(y, 'x')\n"
    assert rename_counts(current, truth, truth) == (2, 2, 2)
    assert code_rename_counts(current, truth, truth, "x") == (1, 1)
    assert code_rename_counts(current, current, truth, "x") == (0, 1)
