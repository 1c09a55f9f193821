from __future__ import annotations

import pytest

from lsp_server.completion.postprocess.drop_open_tail import drop_open_tail
from lsp_server.completion.postprocess.pipeline import postprocess
from tests.lsp_server.postprocess.helpers import at_cursor

FIBONACCI = "def fibonacci(n):\n    |"
GEMMA_BLOCK = (
    '"""Fibonacci sequence for n."""\n    a, b = 0, 1\n    while b * b <= n:\n        yield a + b\n'
    "        a, b = b, a + b\n    if n == 0:\n        yield a\n    if n == 1:"
)


@pytest.mark.parametrize(
    ("document", "text", "expected"),
    [
        # the VS Code e2e's block from Gemma 3: its last header has no body
        (FIBONACCI, GEMMA_BLOCK, GEMMA_BLOCK.removesuffix("\n    if n == 1:")),
        # headers stacked at the end all go, with the blank lines between them
        (FIBONACCI, "a = 1\n    if a:\n\n        for b in c:", "a = 1"),
        # a header whose body follows stays
        (FIBONACCI, "if n:\n        return 1", "if n:\n        return 1"),
        # one line opening a block is where the user writes the body next
        ("class A|", "(Base):", "(Base):"),
        ("def f(a):\n    |", "\n    if a:", "\n    if a:"),
        # braces and calls open blocks too
        ("function f() {\n  |", "g();\n  if (x) {", "g();"),
    ],
)
def test_drop_open_tail(document: str, text: str, expected: str) -> None:
    assert drop_open_tail(at_cursor(document), text) == expected


def test_the_pipeline_drops_a_header_that_tree_sitter_reads_as_an_empty_block() -> None:
    verdict = postprocess(at_cursor(FIBONACCI), GEMMA_BLOCK)
    assert verdict.text is not None
    assert not verdict.text.rstrip().endswith("if n == 1:")
    assert verdict.text.endswith("        yield a")
