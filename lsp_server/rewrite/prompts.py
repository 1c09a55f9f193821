"""Chat messages that ask the model to rewrite a selection (refactor) or to cure diagnostics (fix)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from inference.api.codedraft.v1 import inference_pb2 as pb

DEFAULT_INSTRUCTION = "Make this code clearer and simpler without changing what it does."
SYSTEM = (
    "You are codedraft, a careful programming assistant that edits code. Reply with the complete "
    "replacement for the code you are given, in one fenced code block, and nothing else."
)
# Lines of the file shown around the selection so the model sees names and indentation.
CONTEXT_LINES = 20


@dataclass(frozen=True)
class RewriteTask:
    """The code to rewrite (``selected``, lines ``start_line``..``end_line`` of ``path``) with some
    text before and after it, and what to do."""

    path: str
    language: str
    before: str
    selected: str
    after: str
    instruction: str
    diagnostics: Sequence[str] = ()


def rewrite_messages(task: RewriteTask) -> list[pb.ChatMessage]:
    """System and user messages for one rewrite."""
    fence = _fence_for(task.selected + task.before + task.after)
    parts = [f"File: {task.path} ({task.language or 'text'})"]
    if task.before.strip():
        parts.append(f"Code before the part to rewrite:\n{fence}\n{task.before}\n{fence}")
    parts.append(f"The part to rewrite:\n{fence}{task.language}\n{task.selected}\n{fence}")
    if task.after.strip():
        parts.append(f"Code after it:\n{fence}\n{task.after}\n{fence}")
    if task.diagnostics:
        listed = "\n".join(f"- {message}" for message in task.diagnostics)
        parts.append(f"Problems reported in that part:\n{listed}")
    parts.append(f"Task: {task.instruction}\nReply with the rewritten part only, in one code block.")
    return [
        pb.ChatMessage(role="system", content=SYSTEM),
        pb.ChatMessage(role="user", content="\n\n".join(parts)),
    ]


def fix_instruction(diagnostics: Sequence[str]) -> str:
    """The instruction of a fix: cure the listed problems, change nothing else."""
    if not diagnostics:
        return "Fix the bugs in this code; change nothing else."
    return "Fix the problems listed below; change nothing else."


def _fence_for(text: str) -> str:
    """A backtick fence longer than any run of backticks in ``text``."""
    longest = 0
    run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)
