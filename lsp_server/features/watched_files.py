"""``workspace/didChangeWatchedFiles``: files the editor saw created, changed or deleted on disk reach
the index now, without waiting for the index's own watcher to settle.

Which files count and how they are re-indexed is the index's rule (``WorkspaceIndex.files_changed``):
files outside the workspace, the index's own database and unsupported types are left out there.
Reports that arrive while a re-index runs are gathered and taken in one go after it, so a branch
switch's flood of notifications costs a few refreshes, not a thread each.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path

from lsp_server.server import CodedraftServer

log = logging.getLogger(__name__)


def setup(server: CodedraftServer) -> None:
    pending: set[Path] = set()
    draining = False

    async def drain(ls: CodedraftServer) -> None:
        nonlocal draining
        try:
            while pending and (index := ls.index) is not None:
                paths = sorted(pending)
                pending.clear()
                try:
                    report = await asyncio.to_thread(index.files_changed, paths)
                except Exception:  # the index's own watcher and the next refresh retry these files
                    log.exception("re-indexing %d files the editor reported changed failed", len(paths))
                    continue
                log.debug("files the editor reported changed: %s", report)
        finally:
            pending.clear()
            draining = False

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(
        ls: CodedraftServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        nonlocal draining
        if ls.index is None:  # the first refresh, still to come or running, reads the disk itself
            return
        pending.update(reported_paths(params))
        if pending and not draining:
            draining = True
            ls.spawn(drain(ls))


def reported_paths(params: types.DidChangeWatchedFilesParams) -> list[Path]:
    """The absolute paths of the reported files; URIs of other schemes (untitled, remote) are left out."""
    paths = []
    for change in params.changes:
        try:
            path = to_fs_path(change.uri)
        except ValueError:  # urllib refuses it (a broken IPv6 host)
            path = None
        if path and Path(path).is_absolute():
            paths.append(Path(path))
        else:
            log.debug("didChangeWatchedFiles: %r is no file on this machine", change.uri)
    return paths
