"""A command's ``{uri, range}`` argument from its JSON form, and the whole lines its range selects."""

from __future__ import annotations

import pytest
from lsprotocol import types

from lsp_server.edit_target import (
    command_target,
    range_from_json,
    range_problem,
    range_to_json,
    selected_lines,
)


def _span(start: tuple[int, int], end: tuple[int, int]) -> types.Range:
    return types.Range(start=types.Position(*start), end=types.Position(*end))


def test_a_selection_ending_at_a_line_start_leaves_that_line_out() -> None:
    assert selected_lines(_span((3, 4), (6, 0))) == (3, 5)
    assert selected_lines(_span((3, 4), (6, 1))) == (3, 6)
    assert selected_lines(_span((3, 0), (3, 0))) == (3, 3)  # a cursor: its own line


def test_ranges_round_trip_and_malformed_ones_are_refused() -> None:
    span = _span((1, 2), (3, 4))
    assert range_to_json(span) == {"start": {"line": 1, "character": 2}, "end": {"line": 3, "character": 4}}
    assert range_from_json(range_to_json(span)) == span
    with pytest.raises(ValueError, match="not an LSP range"):
        range_from_json({"start": {"line": 1}})


def test_a_commands_argument_is_one_object_with_uri_and_range() -> None:
    target = {"uri": "file:///a.py", "range": range_to_json(_span((0, 0), (1, 0)))}
    assert command_target((target,)) == target
    assert command_target(([target],)) == target
    with pytest.raises(ValueError, match="expected one argument"):
        command_target(({"uri": "file:///a.py"},))
    with pytest.raises(ValueError, match="expected one argument"):
        command_target(())


def test_a_backwards_range_or_one_past_the_document_is_refused() -> None:
    backwards = {"start": {"line": 5, "character": 0}, "end": {"line": 1, "character": 0}}
    with pytest.raises(ValueError, match=r"^the range ends at 1:0, before it starts$"):
        range_from_json(backwards)
    span = range_from_json({"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 0}})
    assert range_problem(span, 3) == "the range starts at line 4, past the document's 3 lines"
    assert range_problem(span, 4) is None  # the end of a document whose last line ends with a newline
