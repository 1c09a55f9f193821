"""Initialize, settings, start-up of index and daemon, shutdown."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from lsp_server.config import load_settings
from lsp_server.indexing import start_index
from lsp_server.server import CodedraftServer

log = logging.getLogger(__name__)


def setup(server: CodedraftServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: CodedraftServer, params: types.InitializeParams) -> None:
        ls.settings, _ = load_settings(_section(params.initialization_options))
        ls.workspace_root = _workspace_root(params)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: CodedraftServer, params: types.InitializedParams) -> None:
        await _pull_configuration(ls)
        if ls.settings.index.enabled and ls.workspace_root is not None:
            ls.spawn(_index(ls, ls.workspace_root))
        ls.spawn(_connect_daemon(ls))

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: CodedraftServer, params: types.DidChangeConfigurationParams
    ) -> None:
        if isinstance(params.settings, dict) and params.settings:
            ls.settings, _ = load_settings(_section(params.settings), ls.settings)
        await _pull_configuration(ls)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: CodedraftServer, params: None) -> None:
        await ls.daemon.close()
        if ls.index is not None:
            await asyncio.to_thread(ls.index.close)
            ls.index = None


def _section(options: Any) -> Any:
    """The ``codedraft`` settings object, whether sent bare or under a ``codedraft`` key."""
    if isinstance(options, dict) and isinstance(options.get("codedraft"), dict):
        return options["codedraft"]
    return options


def _workspace_root(params: types.InitializeParams) -> Path | None:
    uri = params.workspace_folders[0].uri if params.workspace_folders else params.root_uri
    path = to_fs_path(uri) if uri else params.root_path
    return Path(path).resolve() if path and Path(path).is_dir() else None


async def _pull_configuration(ls: CodedraftServer) -> None:
    """Reads the ``codedraft`` section with ``workspace/configuration`` when the client offers it."""
    capabilities = ls.client_capabilities.workspace
    if capabilities is None or not capabilities.configuration:
        return
    try:
        result = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="codedraft")])
        )
    except Exception as error:  # a client that fails the request must not stop the server
        log.warning("workspace/configuration failed: %s", error)
        return
    if result and isinstance(result[0], dict):
        ls.settings, _ = load_settings(result[0], ls.settings)


async def _index(ls: CodedraftServer, root: Path) -> None:
    ls.index = await start_index(ls.settings.index, ls.status, root, ls)


async def _connect_daemon(ls: CodedraftServer) -> None:
    try:
        await ls.daemon.client()
    except ConnectionError as error:
        log.info("daemon not ready yet: %s", error)
