"""Chat messages of the agent loop: the code, what fails, and what earlier attempts did."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.agent.edits import DIVIDER, REPLACE, SEARCH, Target

MAX_FILE_CHARS = 12_000
MAX_OUTPUT_CHARS = 3_000
MAX_REPLY_CHARS = 1_500
MAX_EXCERPT_LINES = 12
"""Lines of the check's output a small model is shown: the failure itself, not the runner's chatter."""

SYSTEM = f"""You are codedraft, a careful programming assistant that fixes code so that a check passes.
Change as little as you can. Reply with one or more search/replace blocks, each like this:

path/to/file.py
{SEARCH}
the exact lines to find
{DIVIDER}
the lines to put there instead
{REPLACE}

The SEARCH part must match the file exactly. A unified diff is accepted too."""


@dataclass(frozen=True)
class AttemptNote:
    """What one earlier attempt proposed and what became of it, for the next prompt."""

    reply: str
    outcome: str


def fix_messages(
    target: Target,
    file_text: str,
    check_command: str,
    failure: str,
    diagnostics: Sequence[str],
    attempts: Sequence[AttemptNote],
    system: str = SYSTEM,
    instruction: str | None = None,
    baseline_passed: bool = False,
) -> list[pb.ChatMessage]:
    """The messages of one propose step: a fix of what fails, or (with ``instruction``) a refactor that
    must leave the check passing."""
    parts = [f"File {target.path}:\n```\n{_numbered(file_text)}\n```"]
    if instruction is not None:
        parts.append(f"Change lines {target.first + 1}-{target.last + 1}: {instruction}")
    else:
        parts.append(f"The problem is around lines {target.first + 1}-{target.last + 1}.")
    if diagnostics:
        parts.append("Problems reported there:\n" + "\n".join(f"- {d}" for d in diagnostics))
    if instruction is not None and baseline_passed and not attempts:
        parts.append(f"The check `{check_command}` passes now and must still pass after the change.")
    else:
        parts.append(f"The check `{check_command}` fails with:\n```\n{_tail(failure, MAX_OUTPUT_CHARS)}\n```")
    for number, attempt in enumerate(attempts, 1):
        parts.append(
            f"Attempt {number} proposed:\n```\n{_tail(attempt.reply, MAX_REPLY_CHARS)}\n```\n"
            f"Result: {attempt.outcome}"
        )
    parts.append(
        "Propose the change." if instruction is not None else "Propose a fix that makes the check pass."
    )
    return [
        pb.ChatMessage(role="system", content=system),
        pb.ChatMessage(role="user", content="\n\n".join(parts)),
    ]


LINE_SYSTEM = """You fix one line of code so that a failing test passes.
Reply with the corrected line only, in a code block. Do not repeat the rest of the file.
For example, if the bug is on the line `if count > limit:` and the test needs count == limit to
pass, reply:
```
if count >= limit:
```"""


def line_fix_messages(
    target: Target, file_text: str, check_command: str, failure: str, tried: Sequence[str]
) -> list[pb.ChatMessage]:
    """The messages of one propose step in the one-line form (small models): the file, the failure's
    excerpt, the line to correct, and the lines already tried, asking for the corrected line alone."""
    line = file_text.split("\n")[target.first] if target.first < len(file_text.split("\n")) else ""
    number = target.first + 1
    parts = [
        f"File {target.path}:\n```\n{_numbered(file_text)}\n```",
        f"The check `{check_command}` fails:\n```\n{failure_excerpt(failure)}\n```",
        f"The bug is on line {number}:\n```\n{line.strip()}\n```",
    ]
    if tried:
        listed = "\n".join(f"- `{text}`" for text in dict.fromkeys(tried))
        parts.append(f"These versions of line {number} did not work; write a different one:\n{listed}")
    parts.append(f"Write line {number} corrected.")
    return [
        pb.ChatMessage(role="system", content=LINE_SYSTEM),
        pb.ChatMessage(role="user", content="\n\n".join(parts)),
    ]


def failure_excerpt(output: str) -> str:
    """The part of a check's output that says what failed: from the last traceback (or, without one,
    the last lines), without rule lines and the runner's summary, at most :data:`MAX_EXCERPT_LINES`."""
    lines = [line.rstrip() for line in output.split("\n")]
    start = max((n for n, line in enumerate(lines) if line.startswith("Traceback")), default=0)
    kept = [
        line
        for line in lines[start:]
        if line.strip() and line.strip("=-_ ") and not _RUNNER_SUMMARY.match(line.strip())
    ]
    return "\n".join(kept[-MAX_EXCERPT_LINES:])


_RUNNER_SUMMARY = re.compile(r"^(Ran \d+ tests? in|FAILED \(|OK$|\d+ (passed|failed)\b|=+ .* in [\d.]+s)")


def tools_system(tools: Sequence[dict[str, object]]) -> str:
    """The system message declaring ``tools`` the way Hermes/Qwen2.5 chat templates render them."""
    declared = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)
    return (
        f"{SYSTEM}\n\nYou may explore before you edit.\n\n# Tools\n\nYou may call one or more functions "
        "to assist with the user query.\n\nYou are provided with function signatures within "
        f"<tools></tools> XML tags:\n<tools>\n{declared}\n</tools>\n\nFor each function call, return a "
        "json object with function name and arguments within <tool_call></tool_call> XML tags:\n"
        '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
    )


def tool_response(content: str) -> pb.ChatMessage:
    """A tool's result, as Hermes/Qwen2.5 templates render a ``tool`` message."""
    return pb.ChatMessage(role="user", content=f"<tool_response>\n{content}\n</tool_response>")


def _numbered(text: str) -> str:
    if len(text) > MAX_FILE_CHARS:
        text = text[:MAX_FILE_CHARS] + "\n[... the rest of the file is left out ...]"
    return "\n".join(f"{n:4d} | {line}" for n, line in enumerate(text.split("\n"), 1))


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "[...]\n" + text[-limit:]
