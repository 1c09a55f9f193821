"""Shown / accepted / partially accepted / dismissed reports from a real client, through ``codedraft
lsp``: the counts change, the status says so, the state file keeps them, and a reset forgets them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.lsp_harness import RecordingClient, inline_params, open_document, running_lsp, wait_for_status

SOURCE = "def total_of(values):\n    total = sum(values)\n    \n"
ACCEPT = "codedraft.didAcceptCompletionItem"


async def _item(client: RecordingClient, uri: str) -> dict[str, Any]:
    """The suggestion at the blank line, as a client sends an item back (camelCase JSON)."""
    result = await client.text_document_inline_completion_async(inline_params(uri, 2, 4))
    assert result is not None
    (item,) = result.items
    assert item.insert_text == "return total"
    assert item.command is not None and item.command.command == ACCEPT
    (identifier,) = item.command.arguments or []
    assert isinstance(identifier, str) and len(identifier) == 32
    return {
        "insertText": item.insert_text,
        "command": {"title": item.command.title, "command": ACCEPT, "arguments": [identifier]},
    }


def _counts(status: dict[str, Any]) -> tuple[int, int, int, int]:
    accepts = status.get("accepts")
    if accepts is None:
        return (-1, -1, -1, -1)
    return accepts["shown"], accepts["accepted"], accepts["partial"], accepts["dismissed"]


async def test_reports_from_the_editor_are_counted_and_shown_in_the_status(
    tmp_path: Path, scripted_daemon: str, private_state_dir: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    no_prefill = {"completion": {"prefill": False}}
    async with running_lsp(
        workspace, tmp_path, daemon_address=scripted_daemon, settings=no_prefill
    ) as client:
        assert ACCEPT in (client.initialize_result.capabilities.execute_command_provider.commands or [])
        uri = open_document(client, workspace / "calc.py", SOURCE)

        first = await _item(client, uri)
        await wait_for_status(client, lambda s: s.get("accepts", {}).get("shown") == 0)
        client.protocol.notify("textDocument/didShowCompletion", {"item": first})
        await wait_for_status(client, lambda s: _counts(s) == (1, 0, 0, 0))
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=ACCEPT, arguments=first["command"]["arguments"])
        )
        accepted = await wait_for_status(client, lambda s: _counts(s) == (1, 1, 0, 0))
        assert accepted["accepts"]["rate"] == 1.0

        second = await _item(client, uri)  # the same text from the cache: a new suggestion, a new id
        assert second["command"]["arguments"] != first["command"]["arguments"]
        client.protocol.notify("textDocument/didShowCompletion", {"item": second})
        client.protocol.notify(
            "textDocument/didPartiallyAcceptCompletion", {"item": second, "acceptedLength": 6}
        )

        third = await _item(client, uri)
        client.protocol.notify("textDocument/didShowCompletion", {"item": third})
        client.protocol.notify("codedraft/didDismissCompletion", {"item": third})
        client.protocol.notify("codedraft/didDismissCompletion", {"item": first})  # settled: no change
        client.protocol.notify("textDocument/didShowCompletion", {"item": {"insertText": "no id"}})  # ignored
        await wait_for_status(client, lambda s: _counts(s) == (3, 1, 1, 1))

        status = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="codedraft.status")
        )
        accepts = status["accepts"] if isinstance(status, dict) else status.accepts._asdict()
        assert (accepts["shown"], accepts["accepted"], accepts["partial"], accepts["dismissed"]) == (
            3,
            1,
            1,
            1,
        )
        assert accepts["rate"] == round(2 / 3, 4)
        # the scripted model has no calibration: the conservative point, not yet moved (3 < 50 outcomes)
        gate = accepts["gate"] if isinstance(accepts["gate"], dict) else accepts["gate"]._asdict()
        assert gate == {
            "feature": "mean",
            "figure": "first line mean log-probability",
            "threshold": -0.5,
            "calibratedThreshold": -0.5,
        }

        kept = json.loads((private_state_dir / "accept_history.json").read_text())
        ((model, entry),) = kept["models"].items()
        assert model == status_model(client)
        assert (entry["shown"], entry["accepted"], entry["partial"], entry["dismissed"]) == (3, 1, 1, 1)
        assert [accepted for _, accepted in entry["outcomes"]] == [1, 1, 0]
        assert all(set(scores) == {"mean", "min", "first", "sum"} for scores, _ in entry["outcomes"])

        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="codedraft.resetAcceptHistory")
        )
        await wait_for_status(client, lambda s: _counts(s) == (0, 0, 0, 0))
        assert json.loads((private_state_dir / "accept_history.json").read_text()) == {
            "version": 1,
            "models": {},
        }


def status_model(client: RecordingClient) -> str:
    """The served model's name, as the status last gave it."""
    return next(s["model"] for s in reversed(client.statuses) if s.get("model"))


@pytest.mark.parametrize("state", ["corrupt", "unwritable"])
async def test_a_bad_state_file_does_not_stop_suggestions_or_counting(
    tmp_path: Path, scripted_daemon: str, private_state_dir: Path, monkeypatch: pytest.MonkeyPatch, state: str
) -> None:
    kept = private_state_dir / "accept_history.json"
    if state == "corrupt":
        kept.write_text("{half a file")
    else:
        blocker = tmp_path / "not-a-folder"
        blocker.write_text("")
        monkeypatch.setenv("CODEDRAFT_STATE_DIR", str(blocker))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with running_lsp(workspace, tmp_path, daemon_address=scripted_daemon) as client:
        uri = open_document(client, workspace / "calc.py", SOURCE)
        item = await _item(client, uri)
        client.protocol.notify("textDocument/didShowCompletion", {"item": item})
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=ACCEPT, arguments=item["command"]["arguments"])
        )
        await wait_for_status(client, lambda s: _counts(s) == (1, 1, 0, 0))
    if state == "corrupt":  # replaced by a good one
        assert json.loads(kept.read_text())["models"][status_model(client)]["accepted"] == 1
    else:
        assert not kept.exists()
