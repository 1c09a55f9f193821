from __future__ import annotations

import pytest

from lsp_server.completion.postprocess.stop_at_block_end import stop_at_block_end
from tests.lsp_server.postprocess.helpers import at_cursor


@pytest.mark.parametrize(
    ("document", "text", "expected"),
    [
        # inside a body: stops at the dedent to the next top-level definition
        (
            "def f(a):\n    |",
            "b = a + 1\n    return b\n\ndef g():\n    pass",
            "b = a + 1\n    return b\n",
        ),
        # the cursor line opens a block: the body is kept, the next statement at the same level is not
        ("def f(a):|", "\n    return a\nprint(f(1))", "\n    return a"),
        # a brace block: the closing brace is kept, what follows it is not
        ("if (x) {|", "\n  y();\n}\nz();", "\n  y();\n}"),
        # sibling statements at the cursor's level stay
        ("    |", "a = 1\n    b = 2", "a = 1\n    b = 2"),
        # single line: untouched
        ("x = |", "1; }", "1; }"),
    ],
)
def test_stop_at_block_end(document: str, text: str, expected: str) -> None:
    assert stop_at_block_end(at_cursor(document), text) == expected
