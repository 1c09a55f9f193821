"""bench first-suggestion's pure parts: where it puts the cursor, which files it opens, its report."""

from __future__ import annotations

import pytest

from bench.first_suggestion_trial import Visit, cursor_near_end
from bench.lsp_first_suggestion import report, source_files


def test_the_cursor_goes_to_the_end_of_the_last_block_opener_before_nine_tenths() -> None:
    text = "\n".join(["x = 1"] * 5 + ["def f(a):", '    """Args:"""', "    return a"] + ["y = 2"] * 2)
    assert cursor_near_end(text) == (5, len("def f(a):"))
    with pytest.raises(ValueError):
        cursor_near_end("x = 1\n# only: comments:\n")


def test_the_files_are_distinct_and_about_two_thousand_tokens() -> None:
    files = source_files(4)
    assert len(set(files)) == 4
    assert all(6000 <= f.stat().st_size <= 9500 for f in files)


def test_the_report_gives_each_first_suggestion_as_a_multiple_of_the_warm_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    visits = [
        Visit(False, 3000.0, 3100.0, 2000, 2100, 100.0, 8, 1500.0, False),
        Visit(True, 150.0, 180.0, 9, 2100, 100.0, 8, 9000.0, True),
    ]
    report(visits, 1.0, ((1.0, 2.0, 3.0), (4.0, 5.0, 6.0)))
    out = capsys.readouterr().out
    assert "1.00, 2.00, 3.00 at the start, 4.00, 5.00, 6.00 at the end" in out
    assert "median 9.0 s" in out
    rows = {
        line[:44].strip(): line[44:].split()
        for line in out.splitlines()
        if line.startswith(("first", "warm"))
    }
    assert rows["first suggestion, prefill off"][:3] == ["3000", "30.00", "2000"]
    assert rows["first suggestion, prefill on"][:3] == ["150", "1.50", "9"]
    assert "1 of 2 sent the local prompt" in out
