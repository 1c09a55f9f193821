"""``WorkspaceIndex``: the indexer's face to the language server and the command line."""

from __future__ import annotations

import contextlib
import posixpath
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from pathlib import Path

from indexer.parse_pool import default_workers
from indexer.positions import cursor_offset as offset_of
from indexer.refresh import ProgressCallback, RefreshReport, refresh_paths, refresh_workspace
from indexer.retrieval.base import (
    CancelToken,
    NeverCancelled,
    RetrievalContext,
    RetrievalQuery,
    Retriever,
    Snippet,
)
from indexer.retrieval.bm25 import Bm25Retriever
from indexer.retrieval.definitions import DefinitionsRetriever
from indexer.retrieval.fusion import deadline_after, run_retrievers
from indexer.retrieval.recent import RecentWindowsRetriever
from indexer.schema import database_files, default_db_path
from indexer.skipping import SkipPolicy
from indexer.store import IndexStore
from indexer.token_estimate import DEFAULT_ESTIMATE, TokenEstimate
from indexer.watcher import ChangeScope, WorkspaceWatcher

_RECENT_DOCUMENTS = 8


class WorkspaceIndex:
    """The index of one workspace folder: its store, its unsaved buffers, its watcher, retrieval.

    Thread-safe: refreshes are serialised by a lock, and retrieval reads through its own connection
    while a refresh writes. Paths given to it may be absolute or relative to the workspace.
    """

    def __init__(
        self,
        root: Path,
        db_path: Path | None = None,
        policy: SkipPolicy | None = None,
        workers: int | None = None,
    ) -> None:
        self.root = root.resolve()
        # Large refreshes parse in this many processes (default: one per core, at most 8).
        self.workers = default_workers() if workers is None else workers
        self.policy = policy or SkipPolicy()
        self.store = IndexStore(db_path or default_db_path(self.root), self.root)
        self.changes = ChangeScope(
            self.root, self.policy.excluded_directories, database_files(self.store.db_path)
        )
        self._buffers: dict[str, str] = {}
        self._recent: OrderedDict[str, str] = OrderedDict()
        self._refresh_lock = threading.Lock()
        self._deferred: set[str] = set()  # buffer changes waiting for the refresh that holds the lock
        self._state_lock = threading.Lock()
        self._watcher: WorkspaceWatcher | None = None
        self._recent_windows = RecentWindowsRetriever()
        self.retrievers: list[Retriever] = [DefinitionsRetriever(), Bm25Retriever(), self._recent_windows]

    def relative_path(self, path: str | Path) -> str:
        """``path`` relative to the workspace, with "/" (ValueError for a path outside it)."""
        candidate = Path(path)
        if candidate.is_absolute():
            return candidate.resolve().relative_to(self.root).as_posix()
        relative = posixpath.normpath(candidate.as_posix())
        if relative == ".." or relative.startswith("../") or relative == ".":
            raise ValueError(f"{path} is not a file inside the workspace {self.root}")
        return relative

    def refresh(self, progress: ProgressCallback | None = None) -> RefreshReport:
        """Brings the whole index up to date (only new and changed files are parsed)."""
        with self._exclusive():
            try:
                report = refresh_workspace(
                    self.root, self.store, self.policy, self._buffers_copy(), progress, self.workers
                )
            except sqlite3.DatabaseError as error:
                if error.sqlite_errorcode not in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
                    raise
                self.store.rebuild(f"damaged database ({error})")
                report = refresh_workspace(
                    self.root, self.store, self.policy, self._buffers_copy(), progress, self.workers
                )
            # Term statistics move with whole refreshes, not with single edits.
            if report.indexed or report.deleted or self.store.common_terms() is None:
                self.store.compute_common_terms()
        return report

    def refresh_files(self, paths: list[str | Path]) -> RefreshReport:
        """Re-indexes a few files; deleted or newly skipped ones leave the index."""
        relative = [self.relative_path(path) for path in paths]
        with self._exclusive():
            report = refresh_paths(self.root, self.store, self.policy, relative, self._buffers_copy())
        for path in relative:
            self._remember_from_disk(path)
        return report

    def files_changed(self, paths: Iterable[Path]) -> RefreshReport | None:
        """Takes in changes on disk that another watcher saw (the editor's): of the absolute ``paths``,
        those that concern the index are re-indexed as its own watcher would (a directory or a
        ``.gitignore`` refreshes the whole index). None when no path concerns it."""
        relative: list[str] = []
        full = False
        for path in paths:
            if not path.is_absolute():
                continue
            # The folder resolved, the name kept: a workspace opened through a link still matches.
            inside = self.changes.relative(str(path.parent.resolve() / path.name))
            if inside is not None:
                relative.append(inside)
                full = full or self.changes.needs_full_refresh(inside, (self.root / inside).is_dir())
        if full:
            return self.refresh()
        return self.refresh_files(list(relative)) if relative else None

    def update_buffer(self, path: str | Path, text: str) -> None:
        """Indexes an editor's unsaved content in place of the file on disk, until ``close_buffer``.

        Costs a parse and a write of one file. While a refresh runs it returns at once, and the
        refresh indexes the buffer when it finishes."""
        relative = self.relative_path(path)
        # A buffer too large to index (a 50 MB line) is not compared against either: its windows would
        # cost more than a keystroke may.
        comparable = len(text) <= self.policy.max_file_bytes
        with self._state_lock:
            self._buffers[relative] = text
            if comparable:
                self._remember(relative, text)
            else:
                self._recent.pop(relative, None)
        if comparable:
            self._recent_windows.prepare(relative, text)
        self._index_soon(relative)

    def close_buffer(self, path: str | Path) -> None:
        """Forgets an unsaved buffer: the file on disk is indexed again (now or after a running refresh)."""
        relative = self.relative_path(path)
        with self._state_lock:
            self._buffers.pop(relative, None)
        self._index_soon(relative)

    def _index_soon(self, relative: str) -> None:
        """Re-indexes one file now, or, when a refresh holds the store, leaves it to that refresh."""
        with self._state_lock:
            self._deferred.add(relative)
        if self._refresh_lock.acquire(blocking=False):
            self._release_after_deferred()

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """Holds the refresh lock; files deferred meanwhile are indexed before it is let go."""
        self._refresh_lock.acquire()
        try:
            yield
        finally:
            self._release_after_deferred()

    def _release_after_deferred(self) -> None:
        # A file deferred while this thread held the lock is seen after the release below, so none is
        # left behind: whoever holds the lock last drains the set.
        while True:
            try:
                with self._state_lock:
                    paths, self._deferred = sorted(self._deferred), set()
                if paths:
                    refresh_paths(self.root, self.store, self.policy, paths, self._buffers_copy())
            finally:
                self._refresh_lock.release()
            with self._state_lock:
                pending = bool(self._deferred)
            if not pending or not self._refresh_lock.acquire(blocking=False):
                return

    def set_recent_documents(self, documents: list[tuple[str, str]]) -> None:
        """Replaces the recently edited documents (path, text) the "recent" retriever compares against."""
        kept = [
            (self.relative_path(path), text)
            for path, text in documents[-_RECENT_DOCUMENTS:]
            if len(text) <= self.policy.max_file_bytes
        ]
        with self._state_lock:
            self._recent.clear()
            self._recent.update(kept)
        for path, text in kept:
            self._recent_windows.prepare(path, text)

    def start_watching(self, debounce_s: float = 0.3) -> None:
        """Re-indexes files as they change on disk, debounced, from a background thread."""
        if self._watcher is not None:
            return
        self._watcher = WorkspaceWatcher(
            self.changes,
            on_paths=lambda paths: self.refresh_files(list(paths)),
            on_full=lambda: self.refresh(),
            debounce_s=debounce_s,
        )
        self._watcher.start()

    def stop_watching(self) -> None:
        """Stops the watcher, if one runs."""
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    def retrieve(
        self,
        query: RetrievalQuery,
        token_budget: int = 1024,
        time_budget_ms: float = 50.0,
        cancel: CancelToken | None = None,
        estimate: TokenEstimate = DEFAULT_ESTIMATE,
    ) -> list[Snippet]:
        """The snippets for a completion at ``query``'s cursor: fused, de-duplicated, never from the
        cursor's own region, at most ``token_budget`` estimated tokens, best first. Returns what it has
        when ``time_budget_ms`` runs out, and nothing once ``cancel`` is set."""
        with self._state_lock:
            recent = list(self._recent.items())
        context = RetrievalContext(
            store=self.store,
            query=query,
            cursor_offset=offset_of(query.text, query.line, query.column),
            recent_documents=recent,
            deadline=deadline_after(time_budget_ms),
            cancel=cancel or NeverCancelled(),
        )
        return run_retrievers(self.retrievers, context, token_budget, estimate=estimate)

    def close(self) -> None:
        """Stops the watcher and closes the store."""
        self.stop_watching()
        self.store.close()

    def __enter__(self) -> WorkspaceIndex:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _buffers_copy(self) -> dict[str, str]:
        with self._state_lock:
            return dict(self._buffers)

    def _remember(self, relative: str, text: str) -> None:
        self._recent[relative] = text
        self._recent.move_to_end(relative)
        while len(self._recent) > _RECENT_DOCUMENTS:
            self._recent.popitem(last=False)

    def _remember_from_disk(self, relative: str) -> None:
        """Files changed on disk count as recently edited (an open buffer's text wins)."""
        try:
            text = (self.root / relative).read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = None
        indexed = text is not None and self.store.file_language(relative) is not None
        with self._state_lock:
            if relative in self._buffers:
                return
            if text is None or not indexed:
                self._recent.pop(relative, None)
                return
            self._remember(relative, text)
        self._recent_windows.prepare(relative, text)
