from __future__ import annotations

import pytest

from lsp_server.completion.trigger import suppression_reason, text_context
from lsp_server.config import CompletionSettings
from tests.lsp_server.postprocess.helpers import at_cursor


@pytest.mark.parametrize(
    ("document", "language", "expected"),
    [
        ("x = 1  # note|\ny = 2", "python", "comment"),
        ("x = 'ab|c'", "python", "string"),
        ("x = 'abc'|", "python", None),
        ('x = f"{va|}"', "python", None),
        ("def f():\n    |", "python", None),
        ("let a = 1; // todo|", "javascript", "comment"),
        ("/* block |*/ let a;", "javascript", "comment"),
        ('s := "go|"', "go", "string"),
        ("x = 'ab|c'", "plaintext", None),
    ],
)
def test_text_context(document: str, language: str, expected: str | None) -> None:
    assert text_context(at_cursor(document, language)) == expected


def test_suppression_reasons() -> None:
    defaults = CompletionSettings()
    code = at_cursor("def f():\n    |")
    assert suppression_reason(code, defaults) is None
    assert suppression_reason(code, defaults, deleted=True) == "the last edit deleted text"
    assert suppression_reason(at_cursor("# hi|"), defaults) == "the cursor is in a comment"
    assert suppression_reason(at_cursor("x = 'a|'"), defaults) is None
    strict = CompletionSettings(disable_in_strings=True, disable_in_comments=False)
    assert suppression_reason(at_cursor("x = 'a|'"), strict) == "the cursor is in a string"
    assert suppression_reason(at_cursor("# hi|"), strict) is None
    assert suppression_reason(code, CompletionSettings(enabled=False)) == "completions are disabled"
    only_go = CompletionSettings(enabled_languages=["go"])
    assert suppression_reason(code, only_go) == "completions are not enabled for python"
