"""The loop with a scripted model: a wrong fix then a right one; the check decides."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.agent.edits import Target
from lsp_server.agent.loop import FixTask, run_fix
from lsp_server.agent.sandbox import Limits, Sandbox

CALC = "def total(items):\n    return sum(items) + 1\n"
CHECK = "python3 -c 'import calc; assert calc.total([1, 2]) == 3, calc.total([1, 2])'"
WRONG = (
    "calc.py\n<<<<<<< SEARCH\n    return sum(items) + 1\n=======\n"
    "    return sum(items) - 1\n>>>>>>> REPLACE\n"
)
RIGHT = (
    "```diff\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def total(items):\n"
    "-    return sum(items) + 1\n+    return sum(items)\n```\n"
)


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text(CALC)
    return root


class ScriptedModel:
    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.prompts: list[list[pb.ChatMessage]] = []

    async def __call__(self, messages: list[pb.ChatMessage]) -> str:
        self.prompts.append(list(messages))
        return self.replies.pop(0)


async def test_a_wrong_fix_is_rejected_and_the_right_one_verified(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    model = ScriptedModel(WRONG, RIGHT)
    progress: list[str] = []
    task = FixTask(root, Target("calc.py", 1, 1), CHECK, step_limit=4)
    result = await run_fix(task, model, Sandbox("auto", Limits(wall_s=30)), progress.append)
    assert result.status == "verified"
    assert [a.outcome.split(":")[0] for a in result.attempts] == ["the check failed", "the check passed"]
    assert result.changes == {"calc.py": (CALC, "def total(items):\n    return sum(items)\n")}
    assert "-    return sum(items) + 1\n+    return sum(items)\n" in result.diff()
    assert "AssertionError: 2" in result.attempts[0].check.output  # type: ignore[union-attr]
    # the second prompt quotes the first attempt and its failing output
    second = model.prompts[1][-1].content
    assert "return sum(items) - 1" in second and "AssertionError: 2" in second
    assert (root / "calc.py").read_text() == CALC  # the workspace is never written
    ran = f"`{CHECK}` exited with status"
    assert progress == [
        f"checking the untouched copy: {CHECK}",
        "step 1/4: asking the model",
        "step 1: checking the edit to calc.py",
        f"step 1: the check failed: {ran} 1",
        "step 2/4: asking the model",
        "step 2: checking the edit to calc.py",
        f"step 2: the check passed: {ran} 0",
        "verified",
    ]


async def test_malformed_replies_are_rejected_with_a_reason(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    replies = (
        "",
        "calc.py\n<<<<<<< SEARCH\nnot in the file\n=======\nx\n>>>>>>> REPLACE",
        "../outside.py\n<<<<<<< SEARCH\n=======\nx = 1\n>>>>>>> REPLACE",
    )
    task = FixTask(root, Target("calc.py", 1, 1), CHECK, step_limit=3)
    result = await run_fix(task, ScriptedModel(*replies), Sandbox("auto"), lambda _: None)
    assert result.status == "no verified fix"
    outcomes = [a.outcome for a in result.attempts]
    assert "no search/replace block" in outcomes[0]
    assert "is not in calc.py" in outcomes[1]
    assert "climbs out of the workspace" in outcomes[2]
    assert not (tmp_path / "outside.py").exists()
    assert "no verified fix after 3 attempt(s)" in result.report()


async def test_a_passing_check_stops_before_asking_the_model(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    model = ScriptedModel()
    result = await run_fix(FixTask(root, Target("calc.py", 0, 1), "true"), model, Sandbox(), lambda _: None)
    assert result.status == "already passing" and model.prompts == []


async def test_tool_calls_are_followed(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    (root / "notes.txt").write_text("total must add the items\n")
    replies = (
        '<tool_call>\n{"name": "search_workspace", "arguments": {"query": "must add"}}\n</tool_call>',
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "/etc/passwd"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "calc.py", "start_line": 2}}\n</tool_call>',
        '<tool_call>\n{"name": "propose_edit", "arguments": {"edit": '
        + __import__("json").dumps(RIGHT)
        + "}}\n</tool_call>",
    )
    model = ScriptedModel(*replies)
    task = FixTask(root, Target("calc.py", 1, 1), CHECK, step_limit=3, use_tools=True)
    result = await run_fix(task, model, Sandbox(), lambda _: None)
    assert result.verified, result.report()
    assert '"name": "propose_edit"' in model.prompts[0][0].content  # declared in the system message
    responses = [m.content for m in model.prompts[2] if m.content.startswith("<tool_response>")]
    assert "notes.txt:1: total must add the items" in responses[0]
    assert "outside the workspace" in responses[1]
    assert "   2 |     return sum(items) + 1" in responses[2]


@pytest.mark.slow
async def test_the_time_limit_stops_a_model_that_never_answers(tmp_path: Path) -> None:
    root = workspace(tmp_path)

    async def silent(messages: list[pb.ChatMessage]) -> str:
        await asyncio.sleep(60)
        return RIGHT

    task = FixTask(root, Target("calc.py", 1, 1), CHECK, time_limit_s=2)
    result = await run_fix(task, silent, Sandbox(), lambda _: None)
    assert result.status == "no verified fix"
    assert [a.outcome for a in result.attempts] == [
        "stopped: the time limit ran out while the model was answering"
    ]


async def test_a_refactor_must_keep_a_passing_check_passing(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    source = "def total(items):\n    return sum(items)\n"
    (root / "calc.py").write_text(source)
    breaks = (
        "calc.py\n<<<<<<< SEARCH\n    return sum(items)\n=======\n"
        "    return sum(items[1:])\n>>>>>>> REPLACE\n"
    )
    keeps = (
        "calc.py\n<<<<<<< SEARCH\n    return sum(items)\n=======\n"
        "    result = 0\n    for item in items:\n        result += item\n    return result\n>>>>>>> REPLACE\n"
    )
    model = ScriptedModel(breaks, keeps)
    task = FixTask(root, Target("calc.py", 1, 1), CHECK, step_limit=3, instruction="use an explicit loop")
    result = await run_fix(task, model, Sandbox("auto", Limits(wall_s=30)), lambda _: None)
    assert result.status == "verified"  # the baseline passed, yet the loop asked for the refactor
    assert [a.outcome.split(":")[0] for a in result.attempts] == ["the check failed", "the check passed"]
    first = model.prompts[0][-1].content
    assert "use an explicit loop" in first and "passes now and must still pass" in first
    assert "for item in items" in result.changes["calc.py"][1]
    assert (root / "calc.py").read_text() == source


def test_the_agent_loop_imports_no_language_server_library() -> None:
    """`codedraft fix` runs the loop without LSP: neither pygls nor lsprotocol (nor torch) is loaded."""
    import subprocess
    import sys

    code = (
        "import sys, lsp_server.agent.loop, lsp_server.agent.model_calls, lsp_server.agent.sandbox\n"
        "print(','.join(m for m in ('pygls', 'lsprotocol', 'torch') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == ""
