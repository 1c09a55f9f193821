"""The floor a refactor or fix must clear: parses, keeps its definitions, stays a sane size."""

from __future__ import annotations

import pytest

from indexer.languages import LANGUAGES
from lsp_server.rewrite.proposal_check import Proposal, proposal_problem

FIB = "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n"
BEFORE = "import math\n\n\n" + FIB + "\n\nprint(fibonacci(10))\n"
SELECTION = (3, 6)
# what the embedded model answered in the issue: an unrelated docstring and a runaway list
ISSUE_REPLY = "\"\"\"Utilities.\"\"\"\n\n__all__ = ['a', 'b', 'c', 'c', " + "'d', " * 300 + "]\n"
GOOD = (
    'def fibonacci(n):\n    """The n-th Fibonacci number."""\n    a, b = 0, 1\n'
    "    for _ in range(n):\n        a, b = b, a + b\n    return a\n"
)
PYTHON = LANGUAGES["python"]


def _problem(
    replacement: str, instruction: str = "Make this code clearer", before: str = BEFORE
) -> str | None:
    return proposal_problem(
        Proposal(before, before.replace(FIB, replacement), PYTHON, instruction, SELECTION)
    )


def test_the_issue_refactor_is_refused_for_its_size() -> None:
    assert (
        _problem(ISSUE_REPLY)
        == "the proposal is 19x the size of the code it replaces (at most 3x is offered)"
    )


def test_a_good_refactor_passes() -> None:
    assert _problem(GOOD) is None


def test_a_refactor_that_drops_the_function_is_refused() -> None:
    assert _problem('"""Utilities."""\n') == "the proposal drops the definition of fibonacci"


@pytest.mark.parametrize(
    "instruction", ["Remove this function", "rename fibonacci to fib", "Inline it into the caller"]
)
def test_removing_or_renaming_may_drop_definitions_when_asked(instruction: str) -> None:
    assert _problem(GOOD.replace("fibonacci", "fib"), instruction) is None


def test_a_renamed_definition_without_being_asked_is_refused() -> None:
    assert _problem(GOOD.replace("fibonacci", "fib")) == "the proposal drops the definition of fibonacci"


def test_code_that_no_longer_parses_is_refused_with_its_line() -> None:
    broken = FIB.replace("fibonacci(n - 2)\n", "(fibonacci(n - 2)\n")
    assert _problem(broken) == "the proposed code does not parse as python (line 7)"


def test_a_fix_of_broken_code_may_leave_other_errors_but_add_none() -> None:
    broken_before = BEFORE.replace("print(fibonacci(10))", "print(fibonacci(10)")
    assert _problem(GOOD, before=broken_before) is None
    new_error = FIB.replace("if n < 2:", "if n < 2")
    assert _problem(new_error, before=broken_before) == "the proposed code does not parse as python (line 5)"


def test_growth_within_the_factor_passes_and_beyond_it_is_refused() -> None:
    docstring = '    """' + "Explains the function at some length. " * 3 + '"""\n'
    grown = FIB.replace("def fibonacci(n):\n", "def fibonacci(n: int) -> int:\n" + docstring)
    assert _problem(grown) is None
    helpers = "".join(f"\n\ndef helper{i}(value):\n    return value + {i}\n" for i in range(12))
    assert (
        _problem(FIB + helpers)
        == "the proposal is 7x the size of the code it replaces (at most 3x is offered)"
    )


def test_files_without_a_grammar_are_only_size_checked() -> None:
    before = "some notes\nmore notes\n"
    assert proposal_problem(Proposal(before, "other notes\n", None, "", (0, 1))) is None
    assert proposal_problem(Proposal(before, "word " * 500, None, "", (0, 1))) == (
        "the proposal is 111x the size of the code it replaces (at most 3x is offered)"
    )
