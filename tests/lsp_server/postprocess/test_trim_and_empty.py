from __future__ import annotations

import pytest

from lsp_server.completion.postprocess.drop_empty import drop_empty
from lsp_server.completion.postprocess.trim_whitespace import trim_whitespace
from tests.lsp_server.postprocess.helpers import at_cursor


@pytest.mark.parametrize(
    ("document", "text", "expected"),
    [
        ("x = |", "1   ", "1"),
        ("def f():\n    |", "a = 1  \n    return a \n\n\n", "a = 1\n    return a"),
        ("x = |", "  1", "1"),
        ("|", "  1", "  1"),
        ("    |", "return 1\t\n", "return 1"),
        # in the indentation: the suggestion's own indentation must not double it
        ("def f():\n    |", "    return 1", "return 1"),
        ("def f():\n    |", "    if x:\n        y()", "if x:\n        y()"),
    ],
)
def test_trim_whitespace(document: str, text: str, expected: str) -> None:
    assert trim_whitespace(at_cursor(document), text) == expected


@pytest.mark.parametrize("text", ["", " ", "\n\n", "\t \n  "])
def test_drop_empty_drops_whitespace(text: str) -> None:
    assert drop_empty(at_cursor("x = |"), text) is None


def test_drop_empty_keeps_text() -> None:
    assert drop_empty(at_cursor("x = |"), " 1") == " 1"
