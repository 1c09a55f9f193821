"""Indexing the workspace for the server: in a thread, with its progress in the status, and live
afterwards (the watcher); a failure leaves completions working without retrieval."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from indexer.skipping import SkipPolicy, max_file_bytes
from lsp_server.config import IndexSettings
from lsp_server.status import StatusReporter

if TYPE_CHECKING:
    from indexer.workspace import WorkspaceIndex

log = logging.getLogger(__name__)


async def start_index(settings: IndexSettings, status: StatusReporter, root: Path) -> WorkspaceIndex | None:
    """The index of ``root``, refreshed and watching; None (with the reason in the status) when
    indexing failed."""
    from indexer.workspace import WorkspaceIndex  # the index (and tree-sitter) load when first needed

    defaults = SkipPolicy()
    policy = SkipPolicy(
        max_file_bytes=max_file_bytes(settings.max_file_kb),
        excluded_directories=defaults.excluded_directories | frozenset(settings.exclude),
    )
    status.update(indexing=True, index_message=f"indexing {root.name}")
    try:
        index = await asyncio.to_thread(WorkspaceIndex, root, None, policy)
        report = await asyncio.to_thread(index.refresh, status.index_progress)
        index.start_watching()
    except Exception as error:  # retrieval is optional: completions go on without it
        log.exception("indexing %s failed", root)
        status.update(indexing=False, index_message=None, suppressed=f"indexing failed: {error}")
        return None
    log.info("indexed %s: %s", root, report)
    status.update(indexing=False, index_message=None)
    return index
