"""The write transactions of one refresh: whole files, committed in batches that grow.

Batches start small, so the first files are searchable soon, and grow as a large refresh goes on
(every commit flushes the full-text index, which costs less per file in larger batches). A killed
refresh loses at most its open batch and leaves the store consistent; a failed write (a full disk)
rolls the open batch back, and the counts it added to the refresh's report go with it.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Callable

from indexer.store import IndexStore

# Commit after this many written files or seconds, whichever comes first; both double with every
# commit of a refresh, up to the maxima.
_BATCH_FILES = 200
_BATCH_SECONDS = 0.5
_MAX_BATCH_FILES = 1600
_MAX_BATCH_SECONDS = 2.0


class WriteBatch:
    """The open transaction of a refresh and the report counts it holds (``report``'s integer
    attributes, changed through ``count``): they stand once committed and are taken back on abort."""

    def __init__(self, store: IndexStore, report: object) -> None:
        self.store = store
        self.report = report
        self._open: contextlib.ExitStack | None = None  # the batch's transaction, once it has a write
        self._written = 0
        self._uncommitted: Counter[str] = Counter()
        self._started = time.monotonic()
        self._files = _BATCH_FILES
        self._seconds = _BATCH_SECONDS

    def write(self, action: Callable[[], None]) -> None:
        """Runs a write in the batch's transaction; commits the batch when it is large or old enough.

        Writes go in as they come rather than being queued, so a large batch holds no rows in memory."""
        if self._open is None:
            self._open = contextlib.ExitStack()
            self._open.enter_context(self.store.transaction())
        action()
        self._written += 1
        if self._written >= self._files or time.monotonic() - self._started > self._seconds:
            self.commit()
            self._files = min(2 * self._files, _MAX_BATCH_FILES)
            self._seconds = min(2 * self._seconds, _MAX_BATCH_SECONDS)

    def count(self, name: str, count: int = 1) -> None:
        """Adds ``count`` to the report's ``name`` for what this batch writes."""
        setattr(self.report, name, getattr(self.report, name) + count)
        self._uncommitted[name] += count

    def commit(self) -> None:
        """Commits the batch's writes."""
        if self._open is not None:
            open_batch, self._open = self._open, None
            open_batch.close()
        self._written = 0
        self._uncommitted.clear()
        self._started = time.monotonic()

    def abort(self, error: BaseException) -> None:
        """Rolls the open batch back (the store keeps what earlier batches committed); the report no
        longer counts its files."""
        for name, count in self._uncommitted.items():
            setattr(self.report, name, getattr(self.report, name) - count)
        self._uncommitted.clear()
        if self._open is not None:
            open_batch, self._open = self._open, None
            open_batch.__exit__(type(error), error, error.__traceback__)
