"""Parsing many files in worker processes, results in submission order, a bounded number in flight."""

from __future__ import annotations

import collections
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TypeVar

from indexer.analysis import FileAnalysis, analyze
from indexer.file_rows import FileRows, file_rows

Key = TypeVar("Key")
Result = TypeVar("Result")

# A worker gets files in batches of at most this many files or bytes (one round trip each: a round
# trip per file costs the parent more than some small files cost to parse), and each worker has this
# many batches queued, so it never waits for the parent while memory stays bounded.
_BATCH_FILES = 16
_BATCH_BYTES = 512 * 1024
_BATCHES_IN_FLIGHT_PER_WORKER = 3

# Below this many files the workers' start-up (importing tree-sitter, loading grammars) costs more
# than it saves.
MIN_FILES_FOR_WORKERS = 200


def default_workers() -> int:
    """One worker per usable core, at most 8; 1 means parse in this process."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


def _exit_with_parent(parent_pid: int) -> None:
    """Runs in each worker: a parent killed with SIGKILL cannot stop its pool, so workers watch it."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="codedraft-parent-watch", daemon=True).start()


def _analyze_or_error(path: str, data: bytes) -> FileAnalysis | Exception:
    try:
        return analyze(path, data)
    except Exception as error:  # reported per file by the caller; one bad file must not end a refresh
        return error


def _rows_or_error(path: str, data: bytes) -> FileRows | Exception:
    try:
        return file_rows(analyze(path, data))
    except Exception as error:  # as above
        return error


def _run_batch(task: Callable[[str, bytes], Result], batch: list[tuple[str, bytes]]) -> list[Result]:
    return [task(path, data) for path, data in batch]


def analyze_in_order(
    jobs: Iterable[tuple[Key, str, bytes]], workers: int
) -> Iterator[tuple[Key, FileAnalysis | Exception]]:
    """Parses ``(key, path, data)`` jobs, yielding ``(key, analysis or the error it raised)`` in order.

    With ``workers > 1`` the jobs run in spawned processes (spawned, not forked: the caller may run
    threads), a bounded number at a time, so memory stays bounded on a large workspace.
    """
    return _in_order(jobs, workers, _analyze_or_error)


def rows_in_order(
    jobs: Iterable[tuple[Key, str, bytes]], workers: int
) -> Iterator[tuple[Key, FileRows | Exception]]:
    """As ``analyze_in_order``, but yields the rows the store writes for each file (the indexer's
    path: the work of turning an analysis into rows is spread over the workers too)."""
    return _in_order(jobs, workers, _rows_or_error)


def _in_order(
    jobs: Iterable[tuple[Key, str, bytes]], workers: int, task: Callable[[str, bytes], Result]
) -> Iterator[tuple[Key, Result]]:
    if workers <= 1:
        for key, path, data in jobs:
            yield key, task(path, data)
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_exit_with_parent, initargs=(os.getpid(),)
    ) as pool:
        in_flight: collections.deque[tuple[list[Key], Future[list[Result]]]] = collections.deque()
        for batch in _batches(jobs):
            keys = [key for key, _, _ in batch]
            in_flight.append((keys, pool.submit(_run_batch, task, [(path, data) for _, path, data in batch])))
            if len(in_flight) >= _BATCHES_IN_FLIGHT_PER_WORKER * workers:
                done_keys, future = in_flight.popleft()
                yield from zip(done_keys, future.result(), strict=True)
        while in_flight:
            done_keys, future = in_flight.popleft()
            yield from zip(done_keys, future.result(), strict=True)


def _batches(jobs: Iterable[tuple[Key, str, bytes]]) -> Iterator[list[tuple[Key, str, bytes]]]:
    """Jobs in groups of a few files (one round trip to a worker each), cut by count or by bytes."""
    batch: list[tuple[Key, str, bytes]] = []
    size = 0
    for job in jobs:
        batch.append(job)
        size += len(job[2])
        if len(batch) >= _BATCH_FILES or size >= _BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch
