"""Resident memory of this process and its child processes together, sampled while work runs.

The peak of each process (``getrusage``) adds up to more than was ever resident at once, and counts
pages the processes share (the interpreter, the grammars) once per process. This samples the sum over
the live processes, by RSS and by PSS (each shared page divided among its sharers), and keeps the
largest sums. Linux only (``/proc``); elsewhere the sums stay 0.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from dataclasses import dataclass
from types import TracebackType


@dataclass
class MemoryPeaks:
    """The largest sums seen, in MB."""

    rss_mb: float = 0.0
    pss_mb: float = 0.0
    processes: int = 0


def _rollup(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process in KiB; zeros when it is gone."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as rollup:
            for line in rollup:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


class ProcessTreeMemory:
    """A context manager sampling this process and its live children every ``interval_s``."""

    def __init__(self, interval_s: float = 0.2) -> None:
        self.interval_s = interval_s
        self.peaks = MemoryPeaks()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memory-sampler", daemon=True)

    def __enter__(self) -> MemoryPeaks:
        self._thread.start()
        return self.peaks

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()

    def sample(self) -> None:
        """Adds one sample to the peaks."""
        pids = [os.getpid(), *(child.pid for child in multiprocessing.active_children() if child.pid)]
        sums = [_rollup(pid) for pid in pids]
        self.peaks.rss_mb = max(self.peaks.rss_mb, sum(rss for rss, _ in sums) / 1024)
        self.peaks.pss_mb = max(self.peaks.pss_mb, sum(pss for _, pss in sums) / 1024)
        self.peaks.processes = max(self.peaks.processes, len(pids))

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()
