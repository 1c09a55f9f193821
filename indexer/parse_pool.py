"""Parsing many files in worker processes, results in submission order, a bounded number in flight."""

from __future__ import annotations

import collections
import multiprocessing
import os
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TypeVar

from indexer.analysis import FileAnalysis, analyze

Key = TypeVar("Key")

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


def analyze_in_order(
    jobs: Iterable[tuple[Key, str, bytes]], workers: int
) -> Iterator[tuple[Key, FileAnalysis | Exception]]:
    """Parses ``(key, path, data)`` jobs, yielding ``(key, analysis or the error it raised)`` in order.

    With ``workers > 1`` the jobs run in spawned processes (spawned, not forked: the caller may run
    threads), at most ``4 * workers`` at a time, so memory stays bounded on a large workspace.
    """
    if workers <= 1:
        for key, path, data in jobs:
            yield key, _analyze_or_error(path, data)
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_exit_with_parent, initargs=(os.getpid(),)
    ) as pool:
        in_flight: collections.deque[tuple[Key, Future[FileAnalysis | Exception]]] = collections.deque()
        for key, path, data in jobs:
            in_flight.append((key, pool.submit(_analyze_or_error, path, data)))
            if len(in_flight) >= 4 * workers:
                done_key, future = in_flight.popleft()
                yield done_key, future.result()
        while in_flight:
            done_key, future = in_flight.popleft()
            yield done_key, future.result()
