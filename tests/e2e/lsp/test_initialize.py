"""``initialize``: what the server advertises to VS Code and Neovim."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from tests.e2e.lsp_harness import CLIENTS, running_lsp


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_capabilities(tmp_path: Path, client_name: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with running_lsp(
        workspace, tmp_path, client_name, daemon_address=f"unix:{tmp_path}/none.sock"
    ) as client:
        result = client.initialize_result.capabilities
        assert result is not None
        assert result.inline_completion_provider is not None
        assert result.completion_provider is not None
        assert result.execute_command_provider is not None
        assert {"codedraft.status", "codedraft.reindex"} <= set(result.execute_command_provider.commands)
        assert result.text_document_sync is not None
        sync = result.text_document_sync
        kind = sync.change if isinstance(sync, types.TextDocumentSyncOptions) else sync
        assert kind == types.TextDocumentSyncKind.Incremental
