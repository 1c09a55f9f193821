"""Worker processes that run one task over batches of files, and survive a worker that dies.

``run_in_workers`` keeps ``workers`` spawned processes busy, each with a pipe of its own, so the
parent always knows which batch a worker holds. A worker that dies (a segfault in a grammar, the OOM
killer, a stray SIGKILL) loses only its batch: those files are tried again one by one, and a file
whose worker dies a second time is answered with ``WorkerDied`` instead of a result. Results come
back in submission order; a bounded number of batches is in flight, so memory stays bounded however
many files there are.
"""

from __future__ import annotations

import collections
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, Generic, TypeVar

log = logging.getLogger(__name__)

Key = TypeVar("Key")
Result = TypeVar("Result")

Task = Callable[[str, bytes], Result]

# A worker gets files in batches of at most this many files or bytes (one round trip each: a round
# trip per file costs the parent more than some small files cost to parse), and each worker has this
# many batches queued or running, so it never waits for the parent while memory stays bounded.
BATCH_FILES = 16
BATCH_BYTES = 512 * 1024
BATCHES_PER_WORKER = 3


# Workers that die this many times before any worker answered once are not dying of a file.
_DEATHS_BEFORE_GIVING_UP = 3


class WorkerDied(Exception):
    """The process parsing a file died twice while it held the file (the reason says how)."""


@dataclass
class _Batch(Generic[Key]):
    """Files sent to one worker together; ``retry`` batches hold one file whose first worker died."""

    first_seq: int
    jobs: list[tuple[Key, str, bytes]]
    retry: bool = False


@dataclass
class _Worker:
    """A worker process, its end of the pipe, and the batch it holds (None when idle)."""

    process: BaseProcess
    connection: Connection
    batch: _Batch[Any] | None = None


@dataclass
class _Results(Generic[Key, Result]):
    """Answers by sequence number, yielded in order as they complete."""

    keys: dict[int, Key] = field(default_factory=dict)
    done: dict[int, Result | WorkerDied] = field(default_factory=dict)
    next_seq: int = 0

    def ready(self) -> Iterator[tuple[Key, Result | WorkerDied]]:
        while self.next_seq in self.done:
            seq = self.next_seq
            self.next_seq += 1
            yield self.keys.pop(seq), self.done.pop(seq)


def _exit_with_parent(parent_pid: int) -> None:
    """A parent killed with SIGKILL cannot stop its workers, so each worker watches it."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="codedraft-parent-watch", daemon=True).start()


def _worker_main(connection: Connection, parent_pid: int, task: Task[Result]) -> None:
    """A worker's loop: a batch of ``(path, data)`` in, the task's results out, until ``None``."""
    _exit_with_parent(parent_pid)
    while True:
        try:
            batch = connection.recv()
        except EOFError:
            return
        if batch is None:
            return
        connection.send([task(path, data) for path, data in batch])


def _death_reason(process: BaseProcess) -> str:
    code = process.exitcode
    if code is not None and code < 0:
        try:
            return f"parse worker died ({signal.Signals(-code).name})"
        except ValueError:
            return f"parse worker died (signal {-code})"
    return f"parse worker died (exit status {code})"


class _Pool(Generic[Key, Result]):
    """The processes of one ``run_in_workers`` call, and the batches they hold."""

    def __init__(self, count: int, task: Task[Result]) -> None:
        self._context = multiprocessing.get_context("spawn")
        self._task = task
        self.workers = [self._start() for _ in range(count)]
        self.queue: collections.deque[_Batch[Key]] = collections.deque()
        self._answered = False
        self._deaths = 0

    def _start(self) -> _Worker:
        ours, theirs = self._context.Pipe()
        process = self._context.Process(
            target=_worker_main, args=(theirs, os.getpid(), self._task), name="codedraft-parse", daemon=True
        )
        process.start()
        theirs.close()
        return _Worker(process, ours)

    def dispatch(self) -> None:
        """Hands queued batches to idle workers."""
        for worker in self.workers:
            if worker.batch is None and self.queue:
                worker.batch = batch = self.queue.popleft()
                try:
                    worker.connection.send([(path, data) for _, path, data in batch.jobs])
                except OSError:
                    pass  # the worker is dead: ``collect`` sees it and tries the batch again

    @property
    def busy(self) -> bool:
        return any(worker.batch is not None for worker in self.workers)

    def collect(self, results: _Results[Key, Result]) -> None:
        """Waits for at least one busy worker to answer or die, and records what happened."""
        busy = [worker for worker in self.workers if worker.batch is not None]
        waitables: list[object] = [w.connection for w in busy] + [w.process.sentinel for w in busy]
        ready = set(wait(waitables))  # type: ignore[arg-type]
        for index, worker in enumerate(self.workers):
            batch = worker.batch
            if batch is None or not (worker.connection in ready or worker.process.sentinel in ready):
                continue
            try:
                answers = worker.connection.recv()
            except (EOFError, ConnectionResetError, OSError):
                self._replace(index, batch, results)
                continue
            for seq, answer in enumerate(answers, start=batch.first_seq):
                results.done[seq] = answer
            worker.batch = None
            self._answered = True

    def _replace(self, index: int, batch: _Batch[Key], results: _Results[Key, Result]) -> None:
        """A worker died holding ``batch``: its files go back one by one, or fail on a second death."""
        dead = self.workers[index]
        dead.process.join(5)
        reason = _death_reason(dead.process)
        dead.connection.close()
        self._deaths += 1
        if not self._answered and self._deaths >= _DEATHS_BEFORE_GIVING_UP:
            # Not a file's fault: the workers cannot run at all (a broken install, a script that spawns
            # without a ``__main__`` guard). Retrying every file would take forever and skip them all.
            raise RuntimeError(f"parse workers die before answering: {reason}")
        if batch.retry:
            ((_, path, _),) = batch.jobs
            log.error("%s twice while parsing %s: skipped", reason, path)
            results.done[batch.first_seq] = WorkerDied(reason)
        else:
            log.warning("%s holding %d files: each is tried again", reason, len(batch.jobs))
            retries = [_Batch(batch.first_seq + n, [job], retry=True) for n, job in enumerate(batch.jobs)]
            self.queue.extendleft(reversed(retries))
        self.workers[index] = self._start()

    def close(self) -> None:
        """Stops every worker (politely, then not)."""
        for worker in self.workers:
            try:
                worker.connection.send(None)
            except OSError:
                pass
        deadline = time.monotonic() + 5
        for worker in self.workers:
            worker.process.join(max(0.0, deadline - time.monotonic()))
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.connection.close()


def run_in_workers(
    jobs: Iterable[tuple[Key, str, bytes]], workers: int, task: Task[Result]
) -> Iterator[tuple[Key, Result | WorkerDied]]:
    """``task(path, data)`` for each ``(key, path, data)`` job, in ``workers`` spawned processes
    (spawned, not forked: the caller may run threads), yielding ``(key, result)`` in job order. A job
    whose worker died twice yields a ``WorkerDied``. ``task`` must be a module-level function (it is
    pickled by name); it should catch its own exceptions."""
    pool: _Pool[Key, Result] = _Pool(workers, task)
    results: _Results[Key, Result] = _Results()
    batches = _batches(jobs)
    # The end of each batch taken from ``jobs`` whose results are not all yielded yet.
    open_ends: collections.deque[int] = collections.deque()
    seq = 0
    exhausted = False
    try:
        while True:
            while not exhausted and len(open_ends) < BATCHES_PER_WORKER * workers:
                batch = next(batches, None)
                if batch is None:
                    exhausted = True
                    break
                for offset, (key, _, _) in enumerate(batch):
                    results.keys[seq + offset] = key
                pool.queue.append(_Batch(seq, batch))
                seq += len(batch)
                open_ends.append(seq)
            pool.dispatch()
            if pool.busy:
                pool.collect(results)
            yield from results.ready()
            if exhausted and not pool.busy and not pool.queue:
                return
            while open_ends and open_ends[0] <= results.next_seq:
                open_ends.popleft()
    finally:
        pool.close()


def _batches(jobs: Iterable[tuple[Key, str, bytes]]) -> Iterator[list[tuple[Key, str, bytes]]]:
    """Jobs in groups of a few files (one round trip to a worker each), cut by count or by bytes."""
    batch: list[tuple[Key, str, bytes]] = []
    size = 0
    for job in jobs:
        batch.append(job)
        size += len(job[2])
        if len(batch) >= BATCH_FILES or size >= BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch
