from __future__ import annotations

import pytest

from lsp_server.completion.postprocess.balance_brackets import balance_brackets
from lsp_server.completion.postprocess.brackets import imbalance, scan
from tests.lsp_server.postprocess.helpers import at_cursor


@pytest.mark.parametrize(
    ("document", "text", "expected"),
    [
        ("foo(a, |)", "b))", "b)"),
        ("foo(a, |", "b)\nbar()", "b)\nbar()"),
        ("x = [|", "1, 2]]", "1, 2]"),
        ("x = |", "f(')')", "f(')')"),
        ("def f(|):", "a, b)", "a, b)"),
        ("x = (|", "1]", "1"),
        ("|", "}", ""),
    ],
)
def test_balance_brackets(document: str, text: str, expected: str) -> None:
    assert balance_brackets(at_cursor(document), text) == expected


def test_scan_skips_strings_and_counts_unmatched() -> None:
    assert scan("a('(', [1)") == (["(", "["], 1, 9)
    assert imbalance("print(len(x))") == 0
    assert imbalance("print(len(x)") == 1
    assert imbalance('s = "\\")"') == 0
