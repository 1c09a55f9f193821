"""The agent loop refuses a proposal that loses the code before spending a check run on it (checking it
off the event loop), and tells the next attempt why."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from lsp_server.agent import loop
from lsp_server.agent.edits import Target
from lsp_server.agent.loop import FixTask, run_fix
from lsp_server.agent.sandbox import Limits, Sandbox
from tests.lsp_server.agent.test_loop import ScriptedModel

FIB = "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n"
CHECK = "python3 -c 'import fib; assert fib.fibonacci(10) == 55'"
# the issue's refactor: the function replaced by a docstring and a runaway list
ISSUE_REPLY = (
    "```python\n\"\"\"Utilities.\"\"\"\n\n__all__ = ['a', 'b', 'c', 'c', " + "'d', " * 300 + "]\n```\n"
)
GOOD_REPLY = (
    "```python\ndef fibonacci(n):\n    a, b = 0, 1\n    for _ in range(n):\n"
    "        a, b = b, a + b\n    return a\n```\n"
)


async def test_the_issue_refactor_is_refused_and_a_good_one_verified(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "fib.py").write_text(FIB)
    model = ScriptedModel(ISSUE_REPLY, GOOD_REPLY)
    task = FixTask(root, Target("fib.py", 0, 3), CHECK, step_limit=3, instruction="use a loop")
    result = await run_fix(task, model, Sandbox("auto", Limits(wall_s=30)), lambda _: None)
    assert result.status == "verified"
    first, second = result.attempts
    assert first.check is None  # no check run was spent on it
    assert first.outcome.startswith("rejected: fib.py: the proposal is ")
    assert "the size of the code it replaces" in first.outcome
    assert second.outcome.startswith("the check passed")
    assert "the size of the code it replaces" in model.prompts[1][-1].content  # the next attempt hears why
    assert "a, b = b, a + b" in result.changes["fib.py"][1]


async def test_the_proposal_is_checked_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two whole-file parses and a tag extraction: a worker thread runs them, not the loop's."""
    checked_on: list[threading.Thread] = []
    real_check = loop.changes_problem

    def recording(*args: Any) -> str | None:
        checked_on.append(threading.current_thread())
        return real_check(*args)

    monkeypatch.setattr(loop, "changes_problem", recording)
    root = tmp_path / "ws"
    root.mkdir()
    (root / "fib.py").write_text(FIB)
    task = FixTask(root, Target("fib.py", 0, 3), CHECK, step_limit=1, instruction="use a loop")
    result = await run_fix(
        task, ScriptedModel(GOOD_REPLY), Sandbox("auto", Limits(wall_s=30)), lambda _: None
    )
    assert result.status == "verified"
    assert len(checked_on) == 1 and checked_on[0] is not threading.current_thread()
