"""A refactor that loses the code is not offered: a real daemon on scripted models (the issue's bad
refactor, which loops, and a good one), a real language server, ``codedraft.refactor``."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from tests.e2e.daemon_process import running_daemon
from tests.e2e.lsp_harness import RecordingClient, open_document, running_lsp
from tests.fixtures.scripted_model import make_scripted_checkpoint

FIB = "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n"
AREA = "def area(width, height):\n    result = width * height\n    return result\n"
SOURCE = FIB + "\n\n" + AREA
# A bigram model cannot repeat a token inside its script, so the runaway list is a cycle of " 'd',".
BAD_REPLY, BAD_LOOP = '"""Helpers."""\n    NAMES = [', " 'd',"
GOOD_REPLY = "def area(x, y):\n    return x*y"


async def _refactor(client: RecordingClient, uri: str, first: int, last: int) -> dict[str, object]:
    span = {"start": {"line": first, "character": 0}, "end": {"line": last + 1, "character": 0}}
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="codedraft.refactor",
            arguments=[{"uri": uri, "range": span, "instruction": "make it clearer"}],
        )
    )
    assert isinstance(result, dict)
    return result


async def test_the_issue_refactor_is_refused_in_one_line(tmp_path: Path) -> None:
    model = make_scripted_checkpoint(tmp_path / "bad", chat=BAD_REPLY, chat_loop=BAD_LOOP)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "maths.py").write_text(SOURCE)
    with running_daemon(model, tmp_path / "run" / "d.sock", tmp_path / "daemon.log") as daemon:
        async with running_lsp(workspace, tmp_path, daemon_address=daemon.address) as client:
            uri = open_document(client, workspace / "maths.py", SOURCE)
            result = await _refactor(client, uri, 0, 3)
            assert result["applied"] is False
            reason = str(result["reason"])
            assert reason.startswith("the proposal drops the definition of fibonacci"), reason
            assert "\n" not in reason
            assert client.applied_edits == []
            # the daemon stopped the loop: the stream never carried the runaway list
            streamed = "".join(s["delta"] for s in client.streamed if s["id"] == result["id"])
            assert streamed == '"""Helpers."""\n'
            # and the user can ask again (here the same model refuses the same way)
            again = await _refactor(client, uri, 0, 3)
            assert again["applied"] is False and again["id"] != result["id"]


async def test_a_good_refactor_is_offered(tmp_path: Path) -> None:
    model = make_scripted_checkpoint(tmp_path / "good", chat=GOOD_REPLY)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "maths.py").write_text(SOURCE)
    with running_daemon(model, tmp_path / "run" / "d.sock", tmp_path / "daemon.log") as daemon:
        async with running_lsp(workspace, tmp_path, daemon_address=daemon.address) as client:
            uri = open_document(client, workspace / "maths.py", SOURCE)
            result = await _refactor(client, uri, 6, 8)
            assert result["applied"] is True, result
            (params,) = client.applied_edits
            (document_edit,) = params.edit.document_changes
            (edit,) = document_edit.edits
            assert edit.new_text == GOOD_REPLY
