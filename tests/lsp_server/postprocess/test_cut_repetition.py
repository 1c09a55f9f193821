from __future__ import annotations

import pytest

from lsp_server.completion.postprocess.cut_repetition import cut_repetition
from lsp_server.completion.postprocess.pipeline import postprocess
from tests.lsp_server.postprocess.helpers import at_cursor

TABLE = "".join(f"    ({i}, '{chr(97 + i)}', {i * i}),\n" for i in range(10))
DICT = "".join(f"    'key{i}': value{i},\n" for i in range(10))


@pytest.mark.parametrize(
    ("document", "text", "expected"),
    [
        # the ghost text: a line looping within itself is dropped whole
        ("def fibonacci(n):\n    |", "return " + "x * " * 40 + "x", ""),
        # a loop the token budget cut short (three copies reaching the end) is one too
        ("def f(x):\n    |", "y = 1\n    return x * x * x * x * x * x", "y = 1"),
        # the refactor list
        ("__all__ = [|]", "'a', 'b', 'c', 'c', " + "'d', " * 50, ""),
        # the same line, line after line: kept once
        (
            "def f(self):\n    |",
            "self.value = value\n" + "    self.value = value\n" * 6,
            "self.value = value",
        ),
        # a block of two lines, cut off in its fourth copy
        (
            "for item in items:\n    |",
            "total += item.price\n    count += 1\n"
            + "    total += item.price\n    count += 1\n" * 2
            + "    tot",
            "total += item.price\n    count += 1",
        ),
        # identical lines the model left by itself: three copies stay (a matrix of zeros)
        (
            "grid = [\n    |",
            "[0, 0, 0],\n    [0, 0, 0],\n    [0, 0, 0],\n]",
            "[0, 0, 0],\n    [0, 0, 0],\n    [0, 0, 0],\n]",
        ),
        # legitimate repetition survives
        ("def cube(x):\n    |", "return x * x * x", "return x * x * x"),
        ("ROWS = [\n|", TABLE + "]", TABLE + "]"),
        ("d = {\n|", DICT + "}", DICT + "}"),
        (
            "|",
            "call(" + ", ".join(f"arg{i}" for i in range(1, 25)) + ")",
            "call(" + ", ".join(f"arg{i}" for i in range(1, 25)) + ")",
        ),
        ("x = |", "[0, 0, 0, 0, 0, 0, 0]", "[0, 0, 0, 0, 0, 0, 0]"),
        ("|", "# " + "-" * 76 + "\nprint(1)", "# " + "-" * 76 + "\nprint(1)"),
        ("|", 'print("=" * 40)\nprint("=" * 40)', 'print("=" * 40)\nprint("=" * 40)'),
    ],
)
def test_cut_repetition(document: str, text: str, expected: str) -> None:
    assert cut_repetition(at_cursor(document), text) == expected


def test_the_pipeline_names_the_filter_that_dropped_a_loop() -> None:
    verdict = postprocess(at_cursor("def fibonacci(n):\n    |"), "return " + "x * " * 40 + "x")
    assert verdict.text is None
    assert verdict.dropped_by == "cut_repetition"
