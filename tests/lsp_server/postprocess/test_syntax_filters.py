from __future__ import annotations

import pytest

from lsp_server.completion.postprocess.prefer_parsable import prefer_parsable
from lsp_server.completion.postprocess.stop_at_scope_end import stop_at_scope_end
from lsp_server.completion.syntax import error_count, language_spec, parse
from tests.lsp_server.postprocess.helpers import at_cursor


def test_error_count() -> None:
    spec = language_spec("python")
    assert spec is not None
    assert error_count(parse(spec, "def f():\n    return 1\n")) == 0
    assert error_count(parse(spec, "def f(:\n    return 1\n")) > 0


def test_language_ids_map_to_grammars() -> None:
    spec = language_spec("typescriptreact")
    assert spec is not None and spec.name == "tsx"
    assert language_spec("plaintext") is None
    assert language_spec(None) is None


def test_prefer_parsable_keeps_the_longest_part_that_parses() -> None:
    context = at_cursor("def f(x):\n    |\n")
    assert prefer_parsable(context, "y = x * 2\n    return y\n    )(") == "y = x * 2\n    return y"


def test_prefer_parsable_keeps_a_clean_suggestion_whole() -> None:
    context = at_cursor("def f(x):\n    |\n")
    assert prefer_parsable(context, "return x") == "return x"


def test_prefer_parsable_keeps_text_when_nothing_parses() -> None:
    context = at_cursor("def f(x):\n    |\n")
    assert prefer_parsable(context, ")(") == ")("


TOTAL = "def total(amount|, count):\n    return amount * count\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # SmolLM2's reply in the VS Code e2e: `def total(amount):, count):` would be left
        ("):", None),
        ("):\n    return amount", None),
        # the longest leading lines that parse are kept, as at a line's end
        (": float", ": float"),
        (": float\n    )(", ": float"),
    ],
)
def test_inside_a_line_a_suggestion_that_parses_worse_is_dropped(text: str, expected: str | None) -> None:
    assert prefer_parsable(at_cursor(TOTAL), text) == expected


def test_prefer_parsable_without_a_grammar_keeps_text() -> None:
    assert prefer_parsable(at_cursor("x = |", language="plaintext"), ")(") == ")("


@pytest.mark.parametrize(
    ("document", "text", "expected"),
    [
        (
            "def f(a):\n    |\n",
            "b = a + 1\n    return b\ndef g():\n    pass",
            "b = a + 1\n    return b",
        ),
        ("x = |", "1\ny = 2", "1\ny = 2"),
    ],
)
def test_stop_at_scope_end(document: str, text: str, expected: str) -> None:
    assert stop_at_scope_end(at_cursor(document), text) == expected


def test_stop_at_scope_end_in_javascript() -> None:
    context = at_cursor("function f(a) {\n  |\n", language="javascript")
    assert stop_at_scope_end(context, "return a;\n}\nfunction g() {}") == "return a;\n}"
