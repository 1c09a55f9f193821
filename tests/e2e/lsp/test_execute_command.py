"""``workspace/executeCommand``: refactor (streamed, confirmed edit), reindex and status."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from tests.e2e.lsp_harness import open_document, running_lsp, wait_for_status

SOURCE = "import math\n\n\ndef area(r):\n    result = math.pi * r * r\n    return result\n"


async def test_refactor_streams_and_proposes_a_confirmed_edit(tmp_path: Path, scripted_daemon: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "geometry.py").write_text(SOURCE)
    async with running_lsp(workspace, tmp_path, daemon_address=scripted_daemon) as client:
        uri = open_document(client, workspace / "geometry.py", SOURCE)
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="codedraft.refactor",
                arguments=[
                    {
                        "uri": uri,
                        "range": {"start": {"line": 4, "character": 0}, "end": {"line": 5, "character": 0}},
                        "instruction": "use a helper",
                    }
                ],
            )
        )
        assert result["applied"] is True, result
        streamed = [s for s in client.streamed if s["id"] == result["id"]]
        assert "".join(s["delta"] for s in streamed) == "value = compute(items)"
        assert streamed[-1]["done"] is True
        (params,) = client.applied_edits
        (document_edit,) = params.edit.document_changes
        (edit,) = document_edit.edits
        assert edit.new_text == "    value = compute(items)"  # re-indented like the selection
        assert edit.range == types.Range(
            start=types.Position(line=4, character=0), end=types.Position(line=4, character=28)
        )
        annotation = params.edit.change_annotations[edit.annotation_id]
        assert annotation.needs_confirmation is True
        assert (workspace / "geometry.py").read_text() == SOURCE  # the server wrote nothing itself


async def test_reindex_and_status(tmp_path: Path, scripted_daemon: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "geometry.py").write_text(SOURCE)
    async with running_lsp(workspace, tmp_path, daemon_address=scripted_daemon) as client:
        await wait_for_status(client, lambda s: s["state"] == "ready")
        (workspace / "more.py").write_text("def extra():\n    return 1\n")
        report = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="codedraft.reindex", arguments=[])
        )
        assert report == {"indexed": True, "added": 1, "updated": 0, "deleted": 0}
        status = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="codedraft.status", arguments=[])
        )
        assert status["state"] == "ready" and status["model"] == "model" and status["device"] == "cpu"
