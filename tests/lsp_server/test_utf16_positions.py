"""Utf16Positions gives pygls's UTF-16 conversions (exact within a line), clamps past a line's end to
its end, and converts a 50 MB line without walking it in Python."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType

import pytest
from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

from lsp_server.utf16_positions import Utf16Positions, code_point_index, utf16_units

LINES = ["a\U0001f600b\U0001f600\U0001f600c\n", "\ud800x\udc00y é\r\n", "", "plain"]
PYGLS = PositionCodec(types.PositionEncodingKind.Utf16)
CODEC = Utf16Positions()


@pytest.mark.parametrize("line", range(len(LINES)))
def test_positions_within_a_line_convert_as_pyglss_codec(line: int) -> None:
    lines = [*LINES[: line + 1], "tail\n"]
    content = lines[line].rstrip("\r\n")
    for units in range(utf16_units(content) + 1):
        position = types.Position(line=line, character=units)
        assert CODEC.position_from_client_units(lines, position) == PYGLS.position_from_client_units(
            lines, types.Position(line=line, character=units)
        ), units
    for index in range(len(lines[line]) + 1):
        server = ServerTextPosition(line, index)
        assert CODEC.position_to_client_units(lines, server) == PYGLS.position_to_client_units(lines, server)
    assert CODEC.client_num_units(lines[line]) == PYGLS.client_num_units(lines[line])


def test_positions_past_the_end() -> None:
    lines = ["ab\n", "c\U0001f600"]
    assert CODEC.position_from_client_units(
        lines, types.Position(line=0, character=99)
    ) == ServerTextPosition(0, 2)
    assert CODEC.position_from_client_units(
        lines, types.Position(line=1, character=99)
    ) == ServerTextPosition(1, 2)
    assert CODEC.position_from_client_units(lines, types.Position(line=7, character=0)) == ServerTextPosition(
        1, 2
    )
    assert CODEC.position_from_client_units([], types.Position(line=3, character=3)) == ServerTextPosition(
        0, 0
    )
    assert CODEC.position_to_client_units(lines, ServerTextPosition(5, 0)) == types.Position(
        line=2, character=0
    )


def test_inside_a_surrogate_pair_the_position_moves_past_the_character() -> None:
    assert code_point_index("\U0001f600x", 1) == 1
    assert code_point_index("a\U0001f600\U0001f600b", 4) == 3


# Python lines the conversions of a 50 MB line may run: a handful per call, whatever the line's length.
# Walking the line in Python (pygls's codec) would run tens of millions; that took about a minute.
MAX_PYTHON_LINES = 200


class _TooManyLines(Exception):
    pass


def _python_lines(call: Callable[[], object]) -> int:
    """How many Python lines ``call()`` runs (traced; stopped once past MAX_PYTHON_LINES)."""
    count = 0

    def trace(frame: FrameType, event: str, arg: object) -> Callable[..., object]:
        nonlocal count
        if event == "line":
            count += 1
            if count > MAX_PYTHON_LINES:
                raise _TooManyLines
        return trace

    sys.settrace(trace)
    try:
        call()
    except _TooManyLines:
        pass
    finally:
        sys.settrace(None)
    return count


def test_a_50_mb_line_converts_without_walking_it_in_python() -> None:
    # Counted, not timed: the per-character work is done in C (str methods, a regular expression).
    line = "var a=1;" * 6_500_000 + "\U0001f600" + "x" * 100
    into = types.Position(line=0, character=52_000_002)
    assert CODEC.position_from_client_units([line], into) == ServerTextPosition(0, 52_000_001)
    assert CODEC.position_to_client_units([line], ServerTextPosition(0, 52_000_001)) == into
    assert _python_lines(lambda: CODEC.position_from_client_units([line], into)) < MAX_PYTHON_LINES
    back = ServerTextPosition(0, 52_000_001)
    assert _python_lines(lambda: CODEC.position_to_client_units([line], back)) < MAX_PYTHON_LINES
    # the count can fail: pygls's own codec walks the line
    assert _python_lines(lambda: PYGLS.position_from_client_units([line], into)) > MAX_PYTHON_LINES


def test_an_edit_after_the_last_line_lands_at_the_end_of_the_document() -> None:
    """Position (line count, 0) of a text ending with a line break is its very end, as pygls's own
    codec has it: typing there must not land before the last line break (the soak test found it)."""
    document = TextDocument("file:///a.py", "x = 1\ny = 2\n")
    document._position_codec = Utf16Positions()
    end = types.Position(line=2, character=0)
    document.apply_change(
        types.TextDocumentContentChangePartial(range=types.Range(start=end, end=end), text="z = 3\n")
    )
    assert document.source == "x = 1\ny = 2\nz = 3\n"
