"""Indexing the workspace for the server: in a thread, with its progress in the status and as
``$/progress`` work-done reports, and live afterwards (the watcher); a failure leaves completions
working without retrieval.

The refresh runs in a thread and parses in worker processes, so the event loop keeps answering
completions meanwhile (with the part of the index committed so far).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from indexer.skipping import SkipPolicy, max_file_bytes
from lsp_server.config import IndexSettings
from lsp_server.status import INDEX_PROGRESS_INTERVAL_S, StatusReporter

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

    from indexer.refresh import RefreshReport
    from indexer.workspace import WorkspaceIndex

log = logging.getLogger(__name__)

_TOKENS = itertools.count(1)


class IndexWorkDone:
    """One refresh's ``$/progress``: begin, ``files done/total`` reports (at most every
    ``INDEX_PROGRESS_INTERVAL_S``, the last always), end. Reports may come from any thread; they are
    sent from the event loop. Nothing is sent when the client does not support work-done progress."""

    def __init__(self, server: LanguageServer | None) -> None:
        self._server = server
        self._token = f"codedraft/index/{next(_TOKENS)}"
        self._loop: asyncio.AbstractEventLoop | None = None
        self._last = float("-inf")
        self.active = False

    async def begin(self, title: str) -> None:
        """Creates the token with the client and sends the begin report."""
        server = self._server
        if server is None:
            return
        window = server.client_capabilities.window
        if window is None or not window.work_done_progress:
            return
        try:
            await asyncio.wait_for(server.work_done_progress.create_async(self._token), 10)
        except Exception as error:  # a client that refuses the token still gets codedraft/status
            log.info("no index progress: window/workDoneProgress/create failed: %s", error)
            return
        self._loop = asyncio.get_running_loop()
        server.work_done_progress.begin(
            self._token, types.WorkDoneProgressBegin(title=title, cancellable=False, percentage=0)
        )
        self.active = True

    def report(self, done: int, total: int) -> None:
        """Files done of total; throttled except the last."""
        if not self.active or self._loop is None or self._server is None:
            return
        now = time.monotonic()
        if done < total and now - self._last < INDEX_PROGRESS_INTERVAL_S:
            return
        self._last = now
        value = types.WorkDoneProgressReport(
            message=f"{done}/{total} files", percentage=100 * done // max(total, 1)
        )
        with contextlib.suppress(RuntimeError):  # the loop closed: the server is going away
            self._loop.call_soon_threadsafe(self._server.work_done_progress.report, self._token, value)

    def end(self, message: str) -> None:
        """The end report (call from the event loop)."""
        if self.active and self._server is not None:
            self.active = False
            self._server.work_done_progress.end(self._token, types.WorkDoneProgressEnd(message=message))


async def refresh_index(
    index: WorkspaceIndex, status: StatusReporter, server: LanguageServer | None, title: str
) -> RefreshReport:
    """Refreshes ``index`` in a thread, reporting progress in the status and as ``$/progress``."""
    work_done = IndexWorkDone(server)
    await work_done.begin(title)

    def progress(done: int, total: int) -> None:
        status.index_progress(done, total)
        work_done.report(done, total)

    try:
        report = await asyncio.to_thread(index.refresh, progress)
    except BaseException:
        work_done.end("indexing failed")
        raise
    counts = f"{report.indexed} files indexed, {report.unchanged} unchanged, {len(report.skipped)} skipped"
    work_done.end(f"{report.error}; {counts}" if report.error else counts)
    return report


async def start_index(
    settings: IndexSettings, status: StatusReporter, root: Path, server: LanguageServer | None = None
) -> WorkspaceIndex | None:
    """The index of ``root``, refreshed and watching; None (with the reason in the status) when
    indexing failed. ``server`` (when given) gets ``$/progress`` reports."""
    from indexer.workspace import WorkspaceIndex  # the index (and tree-sitter) load when first needed

    defaults = SkipPolicy()
    policy = SkipPolicy(
        max_file_bytes=max_file_bytes(settings.max_file_kb),
        excluded_directories=defaults.excluded_directories | frozenset(settings.exclude),
    )
    status.update(indexing=True, index_message=f"indexing {root.name}")
    try:
        index = await asyncio.to_thread(WorkspaceIndex, root, None, policy)
        report = await refresh_index(index, status, server, f"codedraft: indexing {root.name}")
        index.start_watching()
    except Exception as error:  # retrieval is optional: completions go on without it
        log.exception("indexing %s failed", root)
        status.update(indexing=False, index_message=None, suppressed=f"indexing failed: {error}")
        return None
    log.info("indexed %s: %s", root, report)
    status.update(indexing=False, index_message=None)
    return index
