"""The agent loop: check the untouched copy, then propose, apply, check, until the check passes.

Nothing here writes the user's files: edits go to a :class:`ScratchCopy`, checks run in a
:class:`Sandbox`, and the result carries the changes that passed for the user to confirm.
"""

from __future__ import annotations

import asyncio
import difflib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.agent import tools
from lsp_server.agent.edits import (
    EditDoesNotApply,
    MalformedEdit,
    Target,
    apply_replacement,
    changes_problem,
    corrected_line,
    line_replacement,
    parse_edit,
)
from lsp_server.agent.prompts import AttemptNote, fix_messages, line_fix_messages, tool_response, tools_system
from lsp_server.agent.sandbox import CheckRun, Sandbox
from lsp_server.agent.scratch import ScratchCopy
from lsp_server.rewrite.proposal_check import EditOutsideWorkspace

Generate = Callable[[list[pb.ChatMessage]], Awaitable[str]]
"""Asks the model: chat messages in, its whole reply out (raises on a daemon failure)."""
Progress = Callable[[str], None]


@dataclass(frozen=True)
class FixTask:
    """One fix: the check that must pass, where the problem is, and the loop's limits."""

    workspace: Path
    target: Target
    check_command: str
    diagnostics: Sequence[str] = ()
    overlays: dict[str, str] = field(default_factory=dict)
    """Unsaved editor buffers by workspace-relative path; they win over the files on disk."""
    step_limit: int = 4
    time_limit_s: float = 120.0
    use_tools: bool = False
    """Declare function-calling tools (for chat templates that support them)."""
    instruction: str | None = None
    """A refactor's instruction: the edit must do this and leave the check passing. A check that
    already passes before the edit then does not end the loop."""
    reply_form: str = "blocks"
    """``"blocks"`` (search/replace blocks or a diff) or ``"line"``: the corrected target line alone,
    for small models (``model_fit.reply_form``; a one-line target, no tools, no instruction)."""

    @property
    def one_line(self) -> bool:
        return (
            self.reply_form == "line" and self.instruction is None and self.target.first == self.target.last
        )


@dataclass
class Attempt:
    """What one step proposed and what came of it."""

    step: int
    reply: str
    outcome: str
    check: CheckRun | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "outcome": self.outcome,
            "check": None if self.check is None else _check_json(self.check),
            "reply": self.reply,
        }


@dataclass
class FixResult:
    """A verified fix (``changes`` and the ``check`` that passed) or the story of why there is none."""

    status: str  # "verified", "already passing" or "no verified fix"
    baseline: CheckRun
    check: CheckRun | None = None
    changes: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    attempts: list[Attempt] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        return self.status == "verified"

    def diff(self) -> str:
        """The verified changes as a unified diff (``a/``, ``b/`` paths)."""
        pieces: list[str] = []
        for path, (before, after) in sorted(self.changes.items()):
            pieces += difflib.unified_diff(
                (before or "").splitlines(keepends=True),
                after.splitlines(keepends=True),
                "/dev/null" if before is None else f"a/{path}",
                f"b/{path}",
            )
        return "".join(pieces)

    def report(self) -> str:
        """A few lines for a person: the verdict, the warnings, what each attempt did."""
        lines = [f"!! {warning}" for warning in self.warnings]
        if self.status == "already passing":
            lines.append(f"nothing to fix: {self.baseline.summary()} before any change")
        elif self.verified and self.check is not None:
            lines.append(f"verified fix after {len(self.attempts)} attempt(s): {self.check.summary()}")
        else:
            lines.append(f"no verified fix after {len(self.attempts)} attempt(s)")
        lines += [f"attempt {a.step}: {a.outcome}" for a in self.attempts]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "verified": self.verified,
            "diff": self.diff(),
            "warnings": self.warnings,
            "baseline": _check_json(self.baseline),
            "check": None if self.check is None else _check_json(self.check),
            "attempts": [attempt.to_json() for attempt in self.attempts],
        }


def _check_json(run: CheckRun) -> dict[str, Any]:
    return {
        "command": run.command,
        "exit_code": run.exit_code,
        "timed_out": run.timed_out,
        "backend": run.backend,
        "output": run.output,
    }


async def run_fix(task: FixTask, generate: Generate, sandbox: Sandbox, progress: Progress) -> FixResult:
    """Runs the loop of ``task`` to its end (a passing check, the step limit or the time limit)."""
    scratch = await asyncio.to_thread(ScratchCopy, task.workspace, task.overlays)
    try:
        return await _FixRun(task, generate, sandbox, progress, scratch).run()
    finally:
        await asyncio.to_thread(scratch.close)


class _FixRun:
    def __init__(
        self, task: FixTask, generate: Generate, sandbox: Sandbox, progress: Progress, scratch: ScratchCopy
    ) -> None:
        self.task, self.generate, self.sandbox, self.progress = task, generate, sandbox, progress
        self.scratch = scratch
        self.deadline = time.monotonic() + task.time_limit_s
        self.attempts: list[Attempt] = []
        self.notes: list[AttemptNote] = []
        self.passed: CheckRun | None = None
        self.baseline_passed = False
        self.passing_changes: dict[str, tuple[str | None, str]] = {}
        self.tried_lines: list[str] = []

    async def check(self) -> CheckRun:
        """Runs the check on the scratch copy as it is now, within what is left of the time limit."""
        remaining = max(1.0, self.deadline - time.monotonic())
        scratch, command = self.scratch, self.task.check_command
        return await asyncio.to_thread(
            self.sandbox.run, command, scratch.root, self.task.workspace, scratch.tools, remaining
        )

    async def run(self) -> FixResult:
        self.progress(f"checking the untouched copy: {self.task.check_command}")
        baseline = await self.check()
        self.baseline_passed = baseline.passed
        warnings = list(baseline.warnings)
        if baseline.passed and self.task.instruction is None:
            self.progress("the check already passes")
            return FixResult("already passing", baseline, baseline, warnings=warnings)
        failure = baseline.output
        messages: list[pb.ChatMessage] | None = None
        for step in range(1, self.task.step_limit + 1):
            if time.monotonic() >= self.deadline:
                self.progress("time limit reached")
                break
            self.progress(f"step {step}/{self.task.step_limit}: asking the model")
            if self.task.use_tools and not self.task.one_line:
                messages = messages or self.messages(failure, tools_system(tools.TOOLS))
            prompt = messages if messages is not None else self.messages(failure)
            try:
                reply = await asyncio.wait_for(self.generate(prompt), self.deadline - time.monotonic())
            except TimeoutError:
                self.record(step, "", "stopped: the time limit ran out while the model was answering")
                break
            if messages is not None:
                await self.follow_tools(step, reply, messages)
            else:
                failure = await self.propose(step, reply) or failure
            if self.passed is not None:
                break
        status = "verified" if self.passed is not None else "no verified fix"
        self.progress(status)
        return FixResult(status, baseline, self.passed, self.passing_changes, self.attempts, warnings)

    def messages(self, failure: str, system: str | None = None) -> list[pb.ChatMessage]:
        text = self.scratch.read(self.task.target.path) or ""
        # the check ran at the workspace's own path: relative paths say the same in fewer tokens, and
        # the prompt (so a greedy reply) does not change with where the workspace lives
        failure = failure.replace(f"{self.task.workspace}/", "")
        if self.task.one_line:
            return line_fix_messages(
                self.task.target, text, self.task.check_command, failure, self.tried_lines
            )
        extra = {"system": system} if system else {}
        return fix_messages(
            self.task.target,
            text,
            self.task.check_command,
            failure,
            self.task.diagnostics,
            self.notes,
            instruction=self.task.instruction,
            baseline_passed=self.baseline_passed,
            **extra,
        )

    async def propose(self, step: int, reply: str) -> str | None:
        """Applies the reply's edit to a fresh copy and checks it; returns the check's output."""
        self.scratch.revert()
        target = self.task.target
        try:
            text = self.scratch.read(target.path) or ""
            if self.task.one_line:
                line = corrected_line(reply, target, text)
                self.tried_lines.append(line.strip())
                replacements = [line_replacement(target, text, line)]
            else:
                replacements = parse_edit(reply, target, text)
            for replacement in replacements:
                self.scratch.write(
                    replacement.path, apply_replacement(self.scratch.read(replacement.path), replacement)
                )
        except (MalformedEdit, EditDoesNotApply, EditOutsideWorkspace) as error:
            self.record(step, reply, f"rejected: {error}")
            return None
        changes = self.scratch.changes()
        if not changes:
            self.record(step, reply, "rejected: the edit changes nothing")
            return None
        # whole-file parses and tag extraction: off the event loop the language server shares
        problem = await asyncio.to_thread(changes_problem, changes, target, self.task.instruction or "")
        if problem is not None:
            self.record(step, reply, f"rejected: {problem}")
            return None
        self.progress(f"step {step}: checking the edit to {', '.join(sorted(changes))}")
        run = await self.check()
        if run.passed:
            self.passed, self.passing_changes = run, changes
            self.record(step, reply, f"the check passed: {run.summary()}", run)
        else:
            self.record(step, reply, f"the check failed: {run.summary()}", run)
        return run.output

    async def follow_tools(self, step: int, reply: str, messages: list[pb.ChatMessage]) -> None:
        """One tool-calling turn: run each call and append its response; no call means a proposal."""
        calls = tools.tool_calls(reply)
        messages.append(pb.ChatMessage(role="assistant", content=reply))
        if not calls:
            output = await self.propose(step, reply)
            messages.append(
                pb.ChatMessage(role="user", content=f"Result: {self.attempts[-1].outcome}\n{output or ''}")
            )
            return
        for call in calls:
            if call.error is not None:
                content = f"error: {call.error}"
                self.record(step, reply, f"rejected tool call: {call.error}")
            elif call.name == "read_file":
                content = tools.read_file(self.scratch, call.arguments)
            elif call.name == "search_workspace":
                content = tools.search_workspace(self.scratch, call.arguments)
            elif call.name == "run_check":
                run = await self.check()
                content = f"{run.summary()}\n{run.output}"
            else:
                output = await self.propose(step, str(call.arguments.get("edit", "")))
                content = f"{self.attempts[-1].outcome}\n{output or ''}"
            messages.append(tool_response(content[-tools.MAX_READ_CHARS :]))
            if self.passed is not None:
                return

    def record(self, step: int, reply: str, outcome: str, run: CheckRun | None = None) -> None:
        self.attempts.append(Attempt(step, reply, outcome, run))
        self.notes.append(AttemptNote(reply, outcome if run is None else f"{outcome}\n{run.output[-1500:]}"))
        self.progress(f"step {step}: {outcome}")
