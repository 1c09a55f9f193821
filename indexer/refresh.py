"""Bringing the store up to date with the workspace: a plan of add / update / delete by content hash.

A file whose size and modification time match the store is not even read; one whose bytes hash to the
stored hash is not parsed again. Writes go into transactions of whole files (``indexer.write_batch``),
so a killed refresh loses at most its last batch and leaves the store consistent.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from indexer.file_rows import FileRows
from indexer.parse_pool import MIN_FILES_FOR_WORKERS, rows_in_order
from indexer.parse_workers import WorkerDied
from indexer.schema import is_write_failure
from indexer.skipping import SkipPolicy, WorkspaceFile, content_skip_reason, path_skip_reason, walk_workspace
from indexer.store import IndexStore
from indexer.write_batch import WriteBatch

log = logging.getLogger(__name__)

ProgressCallback = Callable[[int, int], None]


def content_hash(data: bytes) -> str:
    """The key that decides whether a file changed."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


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
    error: str | None = None
    """Why the refresh stopped early (the disk is full): what was committed before it keeps serving."""

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
        self.batch = WriteBatch(store, self.report)

    def forget(self, path: str) -> None:
        """Deletes a file from the store, if it is there."""
        if path in self.known or path in self.known_skipped:
            if path in self.known:
                self.batch.count("deleted")
            self.batch.write(lambda: self.store.delete_file(path))

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
                # One byte past the limit is enough to know a file grew too large since the walk saw it.
                with open(self.root / path, "rb") as stream:
                    data = stream.read(self.policy.max_file_bytes + 1)
            except OSError as error:
                report.skipped.append((path, f"unreadable ({error.strerror})"))
                return None
        else:
            data = buffer_text.encode("utf-8")
            # A buffer's stat matches no file on disk, so the next refresh without it reads the disk again.
            size, mtime = -1, -1
        reason = content_skip_reason(data, self.policy)
        if reason is not None:  # an editor's buffer too: a 50 MB line typed or pasted is not parsed
            report.skipped.append((path, reason))
            self.batch.write(lambda: self.store.write_skipped(path, size, mtime, reason))
            return None
        digest = content_hash(data)
        if state is not None and state.content_hash == digest:
            report.unchanged += 1
            self.batch.write(lambda: self.store.update_stat(path, size, mtime))
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
        self.batch.count("symbols", len(rows.symbols))
        self.batch.count("chunks", len(rows.chunks))
        self.batch.count("added" if job.is_new else "updated")
        self.batch.write(lambda: self.store.write_file(job.path, job.digest, job.size, job.mtime_ns, rows))

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
            self.batch.commit()


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
    with _writing(refresher):
        refresher.parse_and_store(files, workers, progress)
        present.update(buffers)
        for path in sorted((set(refresher.known) | set(refresher.known_skipped)) - present):
            refresher.forget(path)
    refresher.report.seconds = time.perf_counter() - started
    return refresher.report


@contextlib.contextmanager
def _writing(refresher: _Refresher) -> Iterator[None]:
    """Commits what the block wrote into the refresh's open batch. A failed write (a full disk)
    rolls the batch back and stops the refresh with its reason, the committed index serving on; any
    other failure rolls it back and goes on up."""
    try:
        yield
        refresher.batch.commit()
    except sqlite3.Error as error:
        refresher.batch.abort(error)
        if not is_write_failure(error):
            raise
        _stopped(refresher.report, error)
    except BaseException as error:
        refresher.batch.abort(error)
        raise


def _stopped(report: RefreshReport, error: sqlite3.Error) -> None:
    report.error = f"index not updated: {error}"
    log.warning(
        "%s (%d files indexed before it; the rest wait for the next refresh)", report.error, report.indexed
    )


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
    with _writing(refresher):
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
    refresher.report.seconds = time.perf_counter() - started
    return refresher.report


def _stat(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except OSError:
        return -1, -1
    return stat.st_size, stat.st_mtime_ns
