"""Bringing the store up to date with the workspace: a plan of add / update / delete by content hash.

A file whose size and modification time match the store is not even read; one whose bytes hash to the
stored hash is not parsed again. Writes are batched into transactions of whole files, so a killed
refresh loses at most its last batch and leaves the store consistent. Batches start small, so the
first files are searchable soon, and grow as a large refresh goes on (every commit flushes the
full-text index, which costs less per file in larger batches).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from indexer.file_rows import FileRows
from indexer.parse_pool import MIN_FILES_FOR_WORKERS, rows_in_order
from indexer.parse_workers import WorkerDied
from indexer.skipping import SkipPolicy, WorkspaceFile, content_skip_reason, path_skip_reason, walk_workspace
from indexer.store import IndexStore, content_hash

log = logging.getLogger(__name__)

# Commit after this many written files or seconds, whichever comes first; both double with every
# commit of a refresh, up to the maxima.
_BATCH_FILES = 200
_BATCH_SECONDS = 0.5
_MAX_BATCH_FILES = 1600
_MAX_BATCH_SECONDS = 2.0

ProgressCallback = Callable[[int, int], None]


@dataclass
class RefreshReport:
    """What one refresh did."""

    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    symbols: int = 0
    chunks: int = 0
    seconds: float = 0.0

    @property
    def indexed(self) -> int:
        """Files parsed in this refresh."""
        return self.added + self.updated

    def skipped_by_reason(self) -> dict[str, int]:
        """How many files were skipped for each reason."""
        return dict(Counter(reason for _, reason in self.skipped).most_common())


@dataclass(frozen=True)
class _ParseJob:
    """A file whose content is new to the store."""

    path: str
    size: int
    mtime_ns: int
    digest: str
    is_new: bool


class _Refresher:
    """One refresh's state: what the store knew when it started, the write batch, the report."""

    def __init__(
        self,
        root: Path,
        store: IndexStore,
        policy: SkipPolicy,
        buffers: Mapping[str, str],
        paths: list[str] | None = None,
    ) -> None:
        self.root = root
        self.store = store
        self.policy = policy
        self.buffers = buffers
        # A refresh of a few files (every keystroke's buffer update) reads only their states.
        self.known = store.file_states(paths)
        self.known_skipped = store.skipped_states(paths)
        self.report = RefreshReport()
        self._open: contextlib.ExitStack | None = None  # the batch's transaction, once it has a write
        self._written = 0
        self._batch_started = time.monotonic()
        self._batch_files = _BATCH_FILES
        self._batch_seconds = _BATCH_SECONDS

    def write(self, action: Callable[[], None]) -> None:
        """Runs a write in the batch's transaction; commits the batch when it is large or old enough.

        Writes go in as they come rather than being queued, so a large batch holds no rows in memory."""
        if self._open is None:
            self._open = contextlib.ExitStack()
            self._open.enter_context(self.store.transaction())
        action()
        self._written += 1
        too_old = time.monotonic() - self._batch_started > self._batch_seconds
        if self._written >= self._batch_files or too_old:
            self.commit()
            self._batch_files = min(2 * self._batch_files, _MAX_BATCH_FILES)
            self._batch_seconds = min(2 * self._batch_seconds, _MAX_BATCH_SECONDS)

    def commit(self) -> None:
        """Commits the batch's writes."""
        if self._open is not None:
            open_batch, self._open = self._open, None
            open_batch.close()
        self._written = 0
        self._batch_started = time.monotonic()

    def abort(self, error: BaseException) -> None:
        """Rolls the open batch back (the store keeps what earlier batches committed)."""
        if self._open is not None:
            open_batch, self._open = self._open, None
            open_batch.__exit__(type(error), error, error.__traceback__)

    def forget(self, path: str) -> None:
        """Deletes a file from the store, if it is there."""
        if path in self.known or path in self.known_skipped:
            self.write(lambda: self.store.delete_file(path))
            self.report.deleted += path in self.known

    def check(self, file: WorkspaceFile) -> tuple[_ParseJob, bytes] | None:
        """Decides what a file needs; returns it with its bytes when it must be parsed."""
        path, report = file.relative_path, self.report
        state = self.known.get(path)
        size, mtime = file.size, file.mtime_ns
        buffer_text = self.buffers.get(path)
        if buffer_text is None:
            if state is not None and (state.size, state.mtime_ns) == (size, mtime):
                report.unchanged += 1
                return None
            skipped = self.known_skipped.get(path)
            if skipped is not None and skipped[:2] == (size, mtime):
                report.skipped.append((path, skipped[2]))
                return None
            try:
                data = (self.root / path).read_bytes()
            except OSError as error:
                report.skipped.append((path, f"unreadable ({error.strerror})"))
                return None
            reason = content_skip_reason(data, self.policy)
            if reason is not None:
                report.skipped.append((path, reason))
                self.write(lambda: self.store.write_skipped(path, size, mtime, reason))
                return None
        else:
            data = buffer_text.encode("utf-8")
            # A buffer's stat matches no file on disk, so the next refresh without it reads the disk again.
            size, mtime = -1, -1
        digest = content_hash(data)
        if state is not None and state.content_hash == digest:
            report.unchanged += 1
            self.write(lambda: self.store.update_stat(path, size, mtime))
            return None
        return _ParseJob(path, size, mtime, digest, is_new=state is None), data

    def store_rows(self, job: _ParseJob, rows: FileRows | Exception) -> None:
        """Writes a parsed file, or reports why it could not be parsed."""
        if isinstance(rows, WorkerDied):  # logged by the pool, with the signal
            self.report.skipped.append((job.path, str(rows)))
            return
        if isinstance(rows, Exception):
            log.error("indexing %s failed: %r", job.path, rows)
            self.report.skipped.append((job.path, f"indexing failed ({type(rows).__name__})"))
            return
        self.report.symbols += len(rows.symbols)
        self.report.chunks += len(rows.chunks)
        if job.is_new:
            self.report.added += 1
        else:
            self.report.updated += 1
        self.write(lambda: self.store.write_file(job.path, job.digest, job.size, job.mtime_ns, rows))

    def parse_and_store(
        self, files: list[WorkspaceFile], workers: int, progress: ProgressCallback | None
    ) -> None:
        """Checks every file, parses those that changed (in worker processes when there are many)."""

        def jobs() -> Iterator[tuple[_ParseJob, str, bytes]]:
            for done, file in enumerate(files, start=1):
                needed = self.check(file)
                if needed is not None:
                    job, data = needed
                    yield job, job.path, data
                if progress is not None:
                    progress(done, len(files))

        maybe_changed = sum(
            1
            for file in files
            if (state := self.known.get(file.relative_path)) is None or state.mtime_ns != file.mtime_ns
        )
        if maybe_changed < MIN_FILES_FOR_WORKERS:
            for job, rows in rows_in_order(jobs(), 1):
                self.store_rows(job, rows)
            return
        with self.store.bulk_writes():
            for job, rows in rows_in_order(jobs(), workers):
                self.store_rows(job, rows)
            self.commit()


def refresh_workspace(
    root: Path,
    store: IndexStore,
    policy: SkipPolicy,
    buffers: Mapping[str, str] | None = None,
    progress: ProgressCallback | None = None,
    workers: int = 1,
) -> RefreshReport:
    """Indexes new and changed files, forgets deleted ones. ``buffers`` (relative path -> unsaved text)
    take the place of the files on disk; ``workers`` > 1 parses in that many processes."""
    started = time.perf_counter()
    buffers = buffers or {}
    walk = walk_workspace(root, policy)
    refresher = _Refresher(root, store, policy, buffers)
    refresher.report.skipped.extend(walk.skipped)
    present = {file.relative_path for file in walk.files}
    # Unsaved documents with no file on disk yet are indexed too.
    files = walk.files + [WorkspaceFile(path, -1, -1) for path in sorted(set(buffers) - present)]
    try:
        refresher.parse_and_store(files, workers, progress)
        present.update(buffers)
        for path in sorted((set(refresher.known) | set(refresher.known_skipped)) - present):
            refresher.forget(path)
        refresher.commit()
    except BaseException as error:
        refresher.abort(error)
        raise
    refresher.report.seconds = time.perf_counter() - started
    return refresher.report


def refresh_paths(
    root: Path,
    store: IndexStore,
    policy: SkipPolicy,
    relative_paths: list[str],
    buffers: Mapping[str, str] | None = None,
) -> RefreshReport:
    """Re-indexes a few files (the watcher's and the editor's changes); gone or skipped ones are deleted."""
    started = time.perf_counter()
    buffers = buffers or {}
    refresher = _Refresher(root, store, policy, buffers, relative_paths)
    try:
        files: list[WorkspaceFile] = []
        for path in relative_paths:
            reason = path_skip_reason(root, path, policy) if path not in buffers else None
            if reason is None:
                files.append(WorkspaceFile(path, *_stat(root / path)))
                continue
            refresher.forget(path)
            if reason != "missing":
                refresher.report.skipped.append((path, reason))
        refresher.parse_and_store(files, workers=1, progress=None)
        refresher.commit()
    except BaseException as error:
        refresher.abort(error)
        raise
    refresher.report.seconds = time.perf_counter() - started
    return refresher.report


def _stat(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except OSError:
        return -1, -1
    return stat.st_size, stat.st_mtime_ns
