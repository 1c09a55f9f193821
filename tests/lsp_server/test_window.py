from __future__ import annotations

from lsp_server.completion.window import LINE_STEP, cursor_window


def make_document(lines: int) -> str:
    return "\n".join(f"line_{index:04d} = {index}" for index in range(lines))


def test_small_document_is_whole() -> None:
    text = "a = 1\nb = 2\nc = 3"
    window = cursor_window(text, text.index("b = ") + 4, 100, 100)
    assert (window.prefix, window.suffix) == ("a = 1\nb = ", "2\nc = 3")
    assert (window.first_line, window.last_line) == (0, 2)


def test_large_document_is_cut_at_stable_lines_within_budget() -> None:
    text = make_document(1000)
    offset = text.index("line_0500")
    window = cursor_window(text, offset, prefix_tokens=200, suffix_tokens=200)
    # 200 tokens at 3.5 characters are 700 characters: 43 lines of 16 above the cursor (from line
    # 457), rounded to the step at 464; 42 below (to line 542), rounded to the step at 528
    assert (window.first_line, window.last_line) == (464, 528)
    assert LINE_STEP == 16
    assert (len(window.prefix), len(window.suffix)) == (36 * 16, 28 * 16 + 15)
    assert window.prefix.endswith("\n") and window.suffix.startswith("line_0500")
    assert text[offset - len(window.prefix) : offset] == window.prefix
    assert text[offset : offset + len(window.suffix)] == window.suffix


def test_typing_keeps_the_window_start() -> None:
    text = make_document(1000)
    offset = text.index("line_0500 = 500") + len("line_0500 = 500")
    starts = set()
    for typed in ["", " +", " + 1", " + 12", " + 123"]:
        edited = text[:offset] + typed + text[offset:]
        window = cursor_window(edited, offset + len(typed), prefix_tokens=300, suffix_tokens=80)
        starts.add(window.first_line)
        assert window.prefix.endswith("line_0500 = 500" + typed)
    assert len(starts) == 1


def test_a_small_suffix_budget_still_keeps_lines() -> None:
    text = make_document(1000)
    window = cursor_window(text, text.index("line_0500"), prefix_tokens=20, suffix_tokens=40)
    # 40 tokens are 140 characters: the cursor's line and 7 more, under a step so not rounded
    assert window.last_line == 507
    assert window.suffix.count("\n") == window.last_line - 500


def test_offsets_out_of_range_are_clamped() -> None:
    assert cursor_window("abc", 99, 10, 10).prefix == "abc"
    assert cursor_window("abc", -5, 10, 10).suffix == "abc"
    assert cursor_window("", 0, 10, 10).prefix == ""
