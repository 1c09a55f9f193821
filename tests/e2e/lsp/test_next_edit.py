"""Next-edit suggestions through the real language server, as Copilot's clients ask for them: typing a
rename at a definition offers the other uses one after another with ``textDocument/copilotInlineEdit``
(accepted with ``codedraft.acceptInlineEdit``), the same edit is a code action for other editors, and
bad requests get errors while the server keeps serving."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.e2e.daemon_process import running_daemon
from tests.e2e.lsp_harness import open_document, plain, running_lsp
from tests.fixtures.scripted_model import make_scripted_checkpoint

SOURCE = "def scale(value, factor):\n    doubled = value * factor\n    return doubled + value\n"
INDEX_ONLY = {"nextEdit": {"model": False}, "completion": {"prefill": False}}


def _replace(
    client: Any, uri: str, version: int, start: tuple[int, int], end: tuple[int, int], text: str
) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=start[0], character=start[1]),
                        end=types.Position(line=end[0], character=end[1]),
                    ),
                    text=text,
                )
            ],
        )
    )


def _apply(text: str, edit: dict[str, Any]) -> str:
    lines = text.split("\n")

    def offset(position: dict[str, int]) -> int:
        return sum(len(line) + 1 for line in lines[: position["line"]]) + position["character"]

    span = edit["range"]
    return text[: offset(span["start"])] + edit["text"] + text[offset(span["end"]) :]


async def _inline_edits(client: Any, uri: str, line: int, character: int) -> list[dict[str, Any]]:
    params = {
        "textDocument": {"uri": uri, "version": 0},
        "position": {"line": line, "character": character},
        "context": {"triggerKind": 2},
    }
    result = await client.protocol.send_request_async("textDocument/copilotInlineEdit", params)
    return [plain(edit) for edit in result.edits]


async def test_a_typed_rename_is_offered_at_every_other_use_and_tab_applies_each(
    tmp_path: Path, scripted_daemon: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with running_lsp(
        workspace, tmp_path, daemon_address=scripted_daemon, settings=INDEX_ONLY
    ) as client:
        uri = open_document(client, workspace / "scale.py", SOURCE)
        # The user renames "value" to "amount" at the definition: select it, then type.
        _replace(client, uri, 2, (0, 10), (0, 15), "a")
        text = SOURCE.replace("value,", "a,", 1)
        for version, letter in enumerate("mount", start=3):
            column = text.index(",")
            _replace(client, uri, version, (0, column), (0, column), letter)
            text = text[: text.index(",")] + letter + text[text.index(",") :]
        version = 8
        offered = []
        while edits := await _inline_edits(client, uri, 0, 16):
            first = edits[0]
            assert first["textDocument"] == {"uri": uri, "version": version - 1}
            assert first["command"]["command"] == "codedraft.acceptInlineEdit"
            offered.append((first["range"]["start"]["line"], first["text"]))
            client.protocol.notify("textDocument/didShowInlineEdit", {"item": {"command": first["command"]}})
            start, end = first["range"]["start"], first["range"]["end"]
            _replace(
                client,
                uri,
                version,
                (start["line"], start["character"]),
                (end["line"], end["character"]),
                first["text"],
            )
            text = _apply(text, first)
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(
                    command="codedraft.acceptInlineEdit", arguments=first["command"]["arguments"]
                )
            )
            version += 1
            assert len(offered) <= 3
        assert offered == [(1, "amount"), (2, "amount")]
        assert text == SOURCE.replace("value", "amount")


async def test_editors_without_inline_edits_get_the_prediction_as_a_code_action(
    tmp_path: Path, scripted_daemon: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with running_lsp(
        workspace, tmp_path, client_name="neovim", daemon_address=scripted_daemon, settings=INDEX_ONLY
    ) as client:
        uri = open_document(client, workspace / "scale.py", SOURCE)
        _replace(client, uri, 2, (0, 17), (0, 23), "ratio")  # "factor" -> "ratio" at the definition
        cursor = types.Range(
            start=types.Position(line=0, character=22), end=types.Position(line=0, character=22)
        )
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=cursor,
                context=types.CodeActionContext(
                    diagnostics=[], trigger_kind=types.CodeActionTriggerKind.Invoked
                ),
            )
        )
        (apply,) = [action for action in actions or [] if action.title == "Apply predicted edit"]
        (document_edit,) = apply.edit.document_changes
        (edit,) = document_edit.edits
        assert (edit.range.start.line, edit.range.start.character, edit.new_text) == (1, 22, "ratio")
        assert document_edit.text_document.version == 2
        # The editor applies it (the server recognises its own edit): nothing is left to offer.
        _replace(client, uri, 3, (1, 22), (1, 28), "ratio")
        assert await _inline_edits(client, uri, 1, 27) == []


async def test_bad_inline_edit_requests_get_errors_and_the_server_keeps_serving(
    tmp_path: Path, scripted_daemon: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with running_lsp(
        workspace, tmp_path, daemon_address=scripted_daemon, settings=INDEX_ONLY
    ) as client:
        uri = open_document(client, workspace / "scale.py", SOURCE)
        for params in (
            {"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}},
            {"textDocument": {"uri": uri}, "position": {"line": 40, "character": 0}},
            {"textDocument": {"uri": uri}},
        ):
            with pytest.raises(JsonRpcException):
                await client.protocol.send_request_async("textDocument/copilotInlineEdit", params)
        unknown = (workspace / "missing.py").as_uri()
        assert await _inline_edits(client, unknown, 0, 0) == []
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="codedraft.acceptInlineEdit", arguments=["no-such-edit"])
        )
        assert await _inline_edits(client, uri, 0, 0) == []
        assert client.statuses[-1]["suppressed"] == "next edit: no edit to predict"


@pytest.fixture(scope="module")
def sweep_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A daemon whose model speaks Sweep's next-edit format and rewrites any window to "x = 2"."""
    root = tmp_path_factory.mktemp("sweep")
    model = make_scripted_checkpoint(
        root / "model", completion="x = 2", chat="x = 2", tokenizer_config={"next_edit_format": "sweep"}
    )
    with running_daemon(model, root / "run" / "d.sock", root / "daemon.log") as daemon:
        yield daemon.address


async def test_the_models_rewrite_reaches_the_editor_as_an_edit_with_its_figures(
    tmp_path: Path, sweep_daemon: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    settings = {"completion": {"prefill": False}, "index": {"enabled": False}}
    async with running_lsp(workspace, tmp_path, daemon_address=sweep_daemon, settings=settings) as client:
        uri = open_document(client, workspace / "calc.py", "x = 1\n")
        (edit,) = await _inline_edits(client, uri, 0, 5)
        assert (edit["range"], edit["text"]) == (
            {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 5}},
            "2",
        )
        figures = client.statuses[-1]["lastNextEdit"]
        assert (figures["generatedTokens"], figures["reusedTokens"]) == (4, 0)
        # Asked again at once, the same edit stands (no second model call: the prompt is not recomputed).
        assert [e["text"] for e in await _inline_edits(client, uri, 0, 5)] == ["2"]
        client.protocol.notify("textDocument/didShowInlineEdit", {"item": {"command": edit["command"]}})
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="codedraft.rejectInlineEdit", arguments=edit["command"]["arguments"]
            )
        )
        # Dismissed: the model is asked again and its prompt comes from the cache.
        (again,) = await _inline_edits(client, uri, 0, 5)
        assert again["text"] == "2" and again["command"]["arguments"] != edit["command"]["arguments"]
        assert client.statuses[-1]["lastNextEdit"]["reusedTokens"] == figures["promptTokens"] - 1


async def test_without_a_daemon_nothing_is_shown_and_renames_still_work(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    gone = f"unix:{tmp_path / 'nobody.sock'}"
    settings = {"completion": {"prefill": False}}
    async with running_lsp(workspace, tmp_path, daemon_address=gone, settings=settings) as client:
        uri = open_document(client, workspace / "scale.py", SOURCE)
        assert await _inline_edits(client, uri, 2, 4) == []
        assert client.statuses[-1]["suppressed"].startswith("next edit: ")
        assert "nobody.sock" in client.statuses[-1]["suppressed"]
        _replace(client, uri, 2, (0, 17), (0, 23), "ratio")
        (edit,) = await _inline_edits(client, uri, 0, 22)
        assert (edit["range"]["start"], edit["text"]) == ({"line": 1, "character": 22}, "ratio")
