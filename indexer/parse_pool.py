"""Parsing many files in worker processes, results in submission order, a bounded number in flight."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from indexer.analysis import FileAnalysis, analyze
from indexer.file_rows import FileRows, file_rows
from indexer.parse_workers import WorkerDied, run_in_workers

Key = TypeVar("Key")
Result = TypeVar("Result")

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


def _analyze_or_error(path: str, data: bytes) -> FileAnalysis | Exception:
    try:
        return analyze(path, data)
    except Exception as error:  # reported per file by the caller; one bad file must not end a refresh
        return error


def rows_or_error(path: str, data: bytes) -> FileRows | Exception:
    """The rows of one file, or the exception that parsing it raised (never raises)."""
    try:
        return file_rows(analyze(path, data))
    except Exception as error:  # as above
        return error


def analyze_in_order(
    jobs: Iterable[tuple[Key, str, bytes]], workers: int
) -> Iterator[tuple[Key, FileAnalysis | Exception]]:
    """Parses ``(key, path, data)`` jobs, yielding ``(key, analysis or the error it raised)`` in order.

    With ``workers > 1`` the jobs run in worker processes (``indexer.parse_workers``), a bounded number
    at a time, so memory stays bounded on a large workspace; a file whose worker died twice yields
    ``WorkerDied``.
    """
    return _in_order(jobs, workers, _analyze_or_error)


def rows_in_order(
    jobs: Iterable[tuple[Key, str, bytes]], workers: int
) -> Iterator[tuple[Key, FileRows | Exception]]:
    """As ``analyze_in_order``, but yields the rows the store writes for each file (the indexer's
    path: the work of turning an analysis into rows is spread over the workers too)."""
    return _in_order(jobs, workers, rows_or_error)


def _in_order(
    jobs: Iterable[tuple[Key, str, bytes]], workers: int, task: Callable[[str, bytes], Result]
) -> Iterator[tuple[Key, Result | WorkerDied]]:
    if workers <= 1:
        for key, path, data in jobs:
            yield key, task(path, data)
        return
    yield from run_in_workers(jobs, workers, task)
