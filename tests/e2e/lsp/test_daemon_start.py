"""With no daemon answering, the language server starts one (``codedraft.daemon.command`` and
``model``), serves completions from it, and stops it at shutdown."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from lsprotocol import types

from inference.client import InferenceClient
from inference.daemon_launcher import codedraft_command
from tests.e2e.lsp_harness import inline_params, open_document, running_lsp
from tests.fixtures.scripted_model import make_scripted_checkpoint
from tests.fixtures.waiting import wait_until

SOURCE = "def total_of(values):\n    total = sum(values)\n    \n"


async def test_the_server_starts_a_daemon_when_none_answers(tmp_path: Path) -> None:
    model = make_scripted_checkpoint(tmp_path / "model")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    private = Path(tempfile.mkdtemp(prefix="cdl-", dir="/tmp"))  # unix socket paths must be short
    socket = private / "run" / "codedraft" / "daemon.sock"
    settings = {
        "daemon": {
            "command": codedraft_command("daemon", "--kv-cache-mb", "32"),
            "model": str(model),
            "device": "cpu",
        }
    }
    try:
        async with running_lsp(workspace, private, settings=settings) as client:
            uri = open_document(client, workspace / "calc.py", SOURCE)

            async def suggestion() -> list[types.InlineCompletionItem]:
                answer = await client.text_document_inline_completion_async(inline_params(uri, 2, 4))
                return list(answer.items)

            items = await wait_until(suggestion, 120, "a suggestion from the daemon the server started", 0.5)
            assert items[0].insert_text == "return total"
            assert socket.exists()
            log = (private / "run" / "codedraft" / "daemon.log").read_text()
            assert f"codedraft daemon listening on unix:{socket} (loading {model} on cpu)" in log
        async with InferenceClient(f"unix:{socket}") as probe:
            assert await probe.health(timeout=1.0) == "UNREACHABLE"  # stopped with the server
        assert not socket.exists()
    finally:
        shutil.rmtree(private, ignore_errors=True)
