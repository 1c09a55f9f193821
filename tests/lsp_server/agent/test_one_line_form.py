"""The one-line reply form (small models): the corrected line read out of a reply, the prompt that
asks for it with the failure's excerpt and the lines tried, and the loop over both."""

from __future__ import annotations

from pathlib import Path

import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.agent.edits import MalformedEdit, Target, apply_replacement, corrected_line, line_replacement
from lsp_server.agent.loop import FixTask, run_fix
from lsp_server.agent.prompts import failure_excerpt, line_fix_messages
from lsp_server.agent.sandbox import Limits, Sandbox

TEXT = "def mean(values):\n    return sum(values) / (len(values) - 1)\n"
TARGET = Target("stats.py", 1, 1)
UNITTEST_FAILURE = """F
======================================================================
FAIL: test_mean (test_stats.MeanTest.test_mean)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "test_stats.py", line 8, in test_mean
    self.assertEqual(mean([1, 2, 3]), 2)
AssertionError: 3.0 != 2

----------------------------------------------------------------------
Ran 1 test in 0.000s

FAILED (failures=1)
"""


@pytest.mark.parametrize(
    "reply",
    [
        "```python\nreturn sum(values) / len(values)\n```",
        "return sum(values) / len(values)",
        "Here it is:\n```\n    return sum(values) / len(values)\n```\nThis divides by the count.",
        # the whole file back, with the one line changed: the changed line is taken
        "```python\ndef mean(values):\n    return sum(values) / len(values)\n```",
    ],
)
def test_the_corrected_line_keeps_the_lines_indentation(reply: str) -> None:
    assert corrected_line(reply, TARGET, TEXT) == "    return sum(values) / len(values)"


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("", "the reply holds no line of code"),
        ("```python\n```", "the reply holds no line of code"),
        ("```\ndef mean(xs):\n    return sum(xs) / len(xs)\n```", "the reply changes 2 lines; one corrected"),
        (
            "```\ndef mean(values):\n    return sum(values) / (len(values) - 1)\n```",
            "the reply changes 0 lines",
        ),
    ],
)
def test_replies_without_one_corrected_line_are_malformed(reply: str, reason: str) -> None:
    with pytest.raises(MalformedEdit, match=reason.replace("(", r"\(")):
        corrected_line(reply, TARGET, TEXT)


def test_the_replacement_finds_a_line_that_occurs_twice_by_its_neighbours() -> None:
    text = "def a():\n    return 1\n\n\ndef b():\n    return 1\n"
    replacement = line_replacement(Target("m.py", 5, 5), text, "    return 2")
    assert apply_replacement(text, replacement) == "def a():\n    return 1\n\n\ndef b():\n    return 2\n"


def test_the_failure_excerpt_is_the_traceback_without_the_runners_summary() -> None:
    assert failure_excerpt(UNITTEST_FAILURE) == (
        'Traceback (most recent call last):\n  File "test_stats.py", line 8, in test_mean\n'
        "    self.assertEqual(mean([1, 2, 3]), 2)\nAssertionError: 3.0 != 2"
    )
    assert failure_excerpt("\n".join(f"line {n}" for n in range(30))) == "\n".join(
        f"line {n}" for n in range(18, 30)
    )


def test_the_prompt_names_the_line_and_what_was_tried() -> None:
    tried = ["return sum(values) / (len(values) + 1)", "return sum(values) / (len(values) + 1)"]
    system, user = line_fix_messages(TARGET, TEXT, "python3 -m unittest -q", UNITTEST_FAILURE, tried)
    assert system.role == "system" and "corrected line only" in system.content
    assert user.content.endswith(
        "The bug is on line 2:\n```\nreturn sum(values) / (len(values) - 1)\n```\n\n"
        "These versions of line 2 did not work; write a different one:\n"
        "- `return sum(values) / (len(values) + 1)`\n\nWrite line 2 corrected."
    )
    assert "AssertionError: 3.0 != 2" in user.content and "Ran 1 test" not in user.content


class _Model:
    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.prompts: list[str] = []

    async def __call__(self, messages: list[pb.ChatMessage]) -> str:
        self.prompts.append(messages[-1].content)
        return self.replies.pop(0)


async def test_the_loop_asks_for_the_line_and_lists_what_failed(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "stats.py").write_text(TEXT)
    check = "python3 -c 'import stats; assert stats.mean([1, 2, 3]) == 2, stats.mean([1, 2, 3])'"
    model = _Model("```\nreturn sum(values) / (len(values) + 1)\n```", "return sum(values) / len(values)")
    task = FixTask(root, TARGET, check, step_limit=3, reply_form="line")
    result = await run_fix(task, model, Sandbox("auto", Limits(wall_s=30)), lambda _: None)
    assert result.status == "verified"
    assert [a.outcome.split(":")[0] for a in result.attempts] == ["the check failed", "the check passed"]
    assert result.changes == {"stats.py": (TEXT, "def mean(values):\n    return sum(values) / len(values)\n")}
    assert "- `return sum(values) / (len(values) + 1)`" in model.prompts[1]
    assert "AssertionError: 1.5" in model.prompts[1]
    # the check's output names files relative to the workspace, wherever the workspace lives
    assert str(root) not in model.prompts[0] + model.prompts[1]
