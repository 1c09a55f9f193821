"""Starts the real ``codedraft lsp`` as a subprocess and drives it with pytest-lsp's client.

The client records ``codedraft/status`` and ``codedraft/streamText`` notifications; the server gets a
private cache and runtime directory so no test touches the user's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

CODEDRAFT = str(Path(sys.executable).parent / "codedraft")
CLIENTS = ("visual-studio-code", "neovim")


class RecordingClient(LanguageClient):
    """pytest-lsp's client plus the codedraft notifications it received."""

    statuses: list[dict[str, Any]]
    streamed: list[dict[str, Any]]
    applied_edits: list[types.ApplyWorkspaceEditParams]
    initialize_result: types.InitializeResult


def _make_client() -> LanguageClient:
    client = make_test_lsp_client()
    client.statuses = []  # type: ignore[attr-defined]
    client.streamed = []  # type: ignore[attr-defined]
    client.applied_edits = []  # type: ignore[attr-defined]

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        # The user confirms the edit: recorded, not written to disk (the editor would write it).
        client.applied_edits.append(params)  # type: ignore[attr-defined]
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature("codedraft/status")
    def on_status(params: Any) -> None:
        client.statuses.append(plain(params))  # type: ignore[attr-defined]

    @client.feature("codedraft/streamText")
    def on_stream(params: Any) -> None:
        client.streamed.append(plain(params))  # type: ignore[attr-defined]

    return client


def plain(value: Any) -> Any:
    """Notification params as plain dicts and lists (pygls hands unknown methods' params over as
    named tuples)."""
    if hasattr(value, "_asdict"):
        value = value._asdict()
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


@contextlib.asynccontextmanager
async def running_lsp(
    workspace: Path,
    private_dir: Path,
    client_name: str = "visual-studio-code",
    daemon_address: str | None = None,
    settings: dict[str, Any] | None = None,
    log_level: str = "info",
) -> AsyncIterator[RecordingClient]:
    """A language server for ``workspace``, initialized as ``client_name`` would, logging at
    ``log_level``."""
    command = [CODEDRAFT, "--log-level", log_level, "lsp"]
    if daemon_address is not None:
        command += ["--daemon", daemon_address]
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(private_dir / "cache"),
        "XDG_RUNTIME_DIR": str(private_dir / "run"),
    }
    (private_dir / "run").mkdir(parents=True, exist_ok=True, mode=0o700)
    config = ClientServerConfig(server_command=command, client_factory=_make_client, server_env=env)
    client = await config.start()
    if settings is not None:
        client.set_configuration(settings, section="codedraft")
    client.initialize_result = await client.initialize_session(  # type: ignore[attr-defined]
        types.InitializeParams(
            capabilities=client_capabilities(client_name),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name=workspace.name)],
            initialization_options=settings or {},
        )
    )
    try:
        yield client  # type: ignore[misc]
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), 20)
        await client.stop()


def change_document(client: LanguageClient, uri: str, version: int, text: str, at: tuple[int, int]) -> None:
    """Sends didChange inserting ``text`` at ``at`` (line, UTF-16 column)."""
    position = types.Position(line=at[0], character=at[1])
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=position, end=position), text=text
                )
            ],
        )
    )


def inline_params(uri: str, line: int, character: int) -> types.InlineCompletionParams:
    return types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=line, character=character),
        context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Automatic),
    )


def open_document(client: LanguageClient, path: Path, text: str, language: str = "python") -> str:
    """Sends didOpen for ``path`` with ``text``; returns its URI."""
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
        )
    )
    return uri


async def wait_for_status(client: RecordingClient, predicate: Any, timeout: float = 60.0) -> dict[str, Any]:
    """The first recorded status notification matching ``predicate``, waiting up to ``timeout``."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        for status in client.statuses:
            if predicate(status):
                return status
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"no matching codedraft/status within {timeout} s; got {client.statuses}")
        await asyncio.sleep(0.05)
