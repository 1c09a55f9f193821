"""The agent's function-calling tools, declared as JSON schemas, and the calls in a model's reply.

Every tool keeps the loop's limits: reads come from the scratch copy (the workspace and nothing else),
checks run in the sandbox, edits go to the scratch copy.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from lsp_server.agent.scratch import ScratchCopy
from lsp_server.rewrite.proposal_check import EditOutsideWorkspace

MAX_READ_CHARS = 8_000
MAX_SEARCH_HITS = 30
_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def _function(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


TOOLS: list[dict[str, Any]] = [
    _function(
        "read_file",
        "Read a file of the workspace (optionally only some lines).",
        {
            "path": {"type": "string", "description": "path relative to the workspace"},
            "start_line": {"type": "integer", "description": "first line, from 1"},
            "end_line": {"type": "integer", "description": "last line, inclusive"},
        },
        ["path"],
    ),
    _function(
        "search_workspace",
        "Find the lines of workspace files that contain a text.",
        {"query": {"type": "string", "description": "the text to look for (case-sensitive)"}},
        ["query"],
    ),
    _function("run_check", "Run the check command on the workspace as it is now.", {}, []),
    _function(
        "propose_edit",
        "Apply an edit (search/replace blocks or a unified diff) to the original files, undoing any "
        "earlier proposal, and run the check on the result.",
        {"edit": {"type": "string", "description": "search/replace blocks or a unified diff"}},
        ["edit"],
    ),
]


@dataclass(frozen=True)
class ToolCall:
    """One call in a reply; ``error`` says why it cannot run (bad JSON, unknown tool)."""

    name: str
    arguments: dict[str, Any]
    error: str | None = None


def tool_calls(reply: str) -> list[ToolCall]:
    """The ``<tool_call>{json}</tool_call>`` calls in a reply, malformed ones with their error."""
    calls: list[ToolCall] = []
    known = {tool["function"]["name"] for tool in TOOLS}
    for body in _CALL.findall(reply):
        try:
            raw = json.loads(body)
        except json.JSONDecodeError as error:
            calls.append(ToolCall("?", {}, f"the call is not JSON: {error}"))
            continue
        name = raw.get("name") if isinstance(raw, dict) else None
        arguments = raw.get("arguments", {}) if isinstance(raw, dict) else None
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                arguments = None
        if name not in known or not isinstance(arguments, dict):
            calls.append(ToolCall(str(name), {}, f"unknown tool or bad arguments: {body[:200]}"))
        else:
            calls.append(ToolCall(str(name), arguments))
    return calls


def read_file(scratch: ScratchCopy, arguments: dict[str, Any]) -> str:
    """The ``read_file`` tool: numbered lines of a workspace file."""
    try:
        text = scratch.read(str(arguments.get("path", "")))
    except EditOutsideWorkspace as error:
        return f"error: {error}"
    if text is None:
        return f"error: no such file: {arguments.get('path')}"
    lines = text.split("\n")
    first = max(1, _int(arguments.get("start_line"), 1))
    last = min(len(lines), _int(arguments.get("end_line"), len(lines)))
    shown = "\n".join(f"{n:4d} | {lines[n - 1]}" for n in range(first, last + 1))
    return shown[:MAX_READ_CHARS]


def search_workspace(scratch: ScratchCopy, arguments: dict[str, Any]) -> str:
    """The ``search_workspace`` tool: ``path:line: text`` for lines containing the query."""
    query = str(arguments.get("query", ""))
    if not query:
        return "error: empty query"
    hits: list[str] = []
    for path in sorted(scratch.root.rglob("*")):
        if not path.is_file() or path.is_symlink() or len(hits) >= MAX_SEARCH_HITS:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        relative = path.relative_to(scratch.root).as_posix()
        for number, line in enumerate(text.split("\n"), 1):
            if query in line and len(hits) < MAX_SEARCH_HITS:
                hits.append(f"{relative}:{number}: {line.strip()[:200]}")
    return "\n".join(hits) or "no matches"


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
