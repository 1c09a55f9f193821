"""The rule that stops a region's rewrite once it re-joins the original: where it stops, what it
appends, and where it must go on."""

from __future__ import annotations

import pytest

from inference.prompts.next_edit.rejoin import rejoin_rule

UNCHANGED = "def f(a, b):\n    total = a + b\n    scale = 2\n    return total * scale\n\nprint(f(1, 2))"


@pytest.mark.parametrize(
    "reply",
    [
        "",  # nothing written yet
        "def f(a, b):\n    total = a + b\n",  # copying: a prefix of the unchanged reply
        UNCHANGED,  # copied to the end
        "def f(a, b, c):\n    total = a + b\n",  # diverged, one line copied since: not yet
        "def f(a, b, c):\n    total = a + b + c\n    scale = 2\n",  # the line after the change differs too
        "def f(a, b, c):\n\n\n",  # two blank lines are no evidence
    ],
)
def test_it_goes_on_while_copying_or_not_yet_rejoined(reply: str) -> None:
    assert rejoin_rule(UNCHANGED)(reply) is None


def test_two_lines_copied_after_the_change_stop_it_and_the_rest_is_appended() -> None:
    reply = "def f(a, b, c):\n    total = a + b\n    scale = 2\n    ret"
    assert rejoin_rule(UNCHANGED)(reply) == (
        len("def f(a, b, c):\n    total = a + b\n    scale = 2\n"),
        "    return total * scale\n\nprint(f(1, 2))",
    )


def test_an_inserted_line_rejoins_below_where_it_diverged() -> None:
    reply = "def f(a, b):\n    assert a\n    total = a + b\n    scale = 2\n"
    assert rejoin_rule(UNCHANGED)(reply) == (len(reply), "    return total * scale\n\nprint(f(1, 2))")


def test_deleted_lines_rejoin_further_down() -> None:
    # The line where it diverged ("    scale = 2" for "    total = a + b") is not evidence itself.
    assert rejoin_rule(UNCHANGED)("def f(a, b):\n    scale = 2\n    return total * scale\n") is None
    reply = "def f(a, b):\n    scale = 2\n    return total * scale\n\n"
    assert rejoin_rule(UNCHANGED)(reply) == (len(reply), "print(f(1, 2))")


def test_the_last_line_of_the_region_is_never_matched_as_a_complete_line() -> None:
    """``unchanged``'s last line has no line end after it: the reply ending the block stops it."""
    unchanged = "a = 1\nb = 2\nc = 3"
    assert rejoin_rule(unchanged)("a = 9\nb = 2\nc = 3\n") is None
    assert rejoin_rule(unchanged + "\n")("a = 9\nb = 2\nc = 3\n") == (len("a = 9\nb = 2\nc = 3\n"), "")
