"""The next-edit decoding benchmark's cases: a renamed parameter in a region that starts at its def."""

from __future__ import annotations

from bench.next_edit_decode import _keystroke, rename_cases


def test_each_case_renames_a_parameter_in_its_def_line_and_puts_the_cursor_after_it() -> None:
    cases = rename_cases(4, 15)
    assert [case.source for case in cases] == ["textwrap.py", "string.py", "heapq.py", "bisect.py"]
    for case in cases:
        request = case.request
        region, original = request.region.splitlines(), request.original_region.splitlines()
        assert len(region) == len(original) == 15
        assert region[0].lstrip().startswith("def ") and region[1:] == original[1:]
        assert region[0] != original[0]
        assert request.region[: request.cursor].endswith("_value")
        assert request.history[0].hunks[0].original == original[0]
        assert request.history[0].hunks[0].updated == region[0]


def test_a_keystroke_types_one_character_before_the_cursor() -> None:
    request = rename_cases(1, 15)[0].request
    typed = _keystroke(request)
    assert typed.region == request.region[: request.cursor] + "x" + request.region[request.cursor :]
    assert typed.cursor == request.cursor + 1
    assert typed.session_id == request.session_id
