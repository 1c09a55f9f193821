from __future__ import annotations

import pytest

from lsp_server.completion.postprocess.drop_suffix_repeat import drop_suffix_repeat
from tests.lsp_server.postprocess.helpers import at_cursor


@pytest.mark.parametrize(
    ("document", "text", "expected"),
    [
        # an auto-inserted closing bracket is not written twice
        ("foo(|)", "x)", "x"),
        # but a balanced call inside print( keeps its own bracket
        ("print(|)", "len(x)", "len(x)"),
        # the model re-writing the lines that follow is cut
        (
            "def f():\n    |\n    return total\n\nprint(f())",
            "total = 0\n    return total\n\nprint(f())",
            "total = 0",
        ),
        # a single repeated line that is not the start of what follows stays
        ("a = 1\n|\nb = 2\nc = 3", "b = 2\nd = 4", "b = 2\nd = 4"),
        # a quote the editor closed already
        ('x = f("|")', 'hello")', "hello"),
        ("x = |", "1", "1"),
    ],
)
def test_drop_suffix_repeat(document: str, text: str, expected: str) -> None:
    assert drop_suffix_repeat(at_cursor(document), text) == expected
