from __future__ import annotations

import pytest

from lsp_server.rewrite.prompts import RewriteTask, rewrite_messages
from lsp_server.rewrite.reply import code_from_reply, keep_indentation


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Here you go:\n```python\ndef f():\n    return 1\n```\nThanks", "def f():\n    return 1"),
        ("```\nx = 1\n```", "x = 1"),
        ("````\na = '```'\n````", "a = '```'"),
        ("~~~py\ny = 2\n~~~", "y = 2"),
        ("```python\nz = 3\n", "z = 3"),
        ("plain = True\n", "plain = True"),
        ("", None),
        ("```python\n\n```", None),
    ],
)
def test_code_from_reply(reply: str, expected: str | None) -> None:
    assert code_from_reply(reply) == expected


def test_keep_indentation_restores_a_dropped_indent() -> None:
    original = "    x = 1\n    y = 2"
    assert keep_indentation(original, "x = 1\ny = 3") == "    x = 1\n    y = 3"
    assert keep_indentation(original, "    x = 1") == "    x = 1"
    assert keep_indentation("x = 1", "y = 1") == "y = 1"


def test_prompt_fences_outlast_backticks_in_the_code() -> None:
    task = RewriteTask("a.md", "markdown", "", "text with ``` inside", "", "tidy it", ["E1: bad"])
    system, user = rewrite_messages(task)
    assert system.role == "system" and user.role == "user"
    assert "````markdown\ntext with ``` inside\n````" in user.content
    assert "- E1: bad" in user.content
    assert "Task: tidy it" in user.content
