"""How many CPU threads the engine's tensor operations use: one per core, fewer while other processes
hold cores. The one owner of that rule; the daemon's engine thread and the benchmarks' engines call it.

A decode step is a few hundred parallel regions, and each waits for its slowest thread. When another
process takes one of two cores, one of two torch threads gets half a core in scheduler slices of
milliseconds, so every region waits for it: both engines were measured 2-10x slower (issue 28). One
thread on the free core loses only the second core's share. So the engine thread samples how much CPU
other processes used since the last sample (``/proc/stat`` for the cores this process may run on,
minus this process's own CPU time, about 60 µs a sample, at most every ``interval_s``) and follows the
cores left free, with hysteresis: it drops threads as soon as one of them shares a core for more than
:data:`DROP_SHARE` of it, and takes them back only after :data:`RAISE_WINDOWS` samples in a row in
which one more thread would have had a core (but :data:`RAISE_SHARE`) to itself.

``torch.set_num_threads`` changes only the calling thread's OpenMP team once that thread has run a
parallel operation (the count is per thread in OpenMP), so :meth:`CpuThreads.apply` must be called in
the thread that runs the engine's steps. Spinning follows the threads: with one thread there are no
OpenMP workers to spin (``inference/openmp.py`` bounds their spin otherwise).
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

DROP_SHARE = 0.35
"""A thread that would share a core with other processes for more than this share of it is dropped."""
RAISE_SHARE = 0.2
"""A thread is added back only when it would share its core for at most this share of it..."""
RAISE_WINDOWS = 2
"""...in this many samples in a row (so a short lull of another process does not flip the count)."""
INTERVAL_S = 0.5


@dataclass(frozen=True)
class ThreadChoice:
    """The thread count in use and how many samples in a row one more thread would have fitted."""

    threads: int
    calm_samples: int = 0


def next_threads(choice: ThreadChoice, cap: int, cores: int, others: float) -> ThreadChoice:
    """The thread count after a sample in which other processes used ``others`` of this process's
    ``cores`` (in cores, averaged over the sample); between 1 and ``cap``. Pure: the rule itself."""
    free = max(0.0, cores - others)
    current = min(choice.threads, cap)
    if current - free > DROP_SHARE:
        return ThreadChoice(max(1, min(cap, math.floor(free + DROP_SHARE))))
    if current < cap and current + 1 - free <= RAISE_SHARE:
        calm = choice.calm_samples + 1
        if calm >= RAISE_WINDOWS:
            return ThreadChoice(max(current + 1, min(cap, math.floor(free + RAISE_SHARE))))
        return ThreadChoice(current, calm)
    return ThreadChoice(current)


def allowed_cpus() -> set[int]:
    """The CPUs this process may run on."""
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return set(range(os.cpu_count() or 1))


def parse_proc_stat(text: str, cpus: set[int]) -> tuple[int, int]:
    """(busy, total) clock ticks summed over the ``cpuN`` lines of ``cpus`` in ``/proc/stat`` text.
    Idle and I/O wait are not busy; time stolen by a hypervisor is (another guest held the core)."""
    busy = total = 0
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu" or int(name[3:]) not in cpus:
            continue
        fields = [int(field) for field in rest.split()[:8]]
        busy += sum(fields) - fields[3] - fields[4]
        total += sum(fields)
    return busy, total


class OtherLoad:
    """Samples how many cores other processes used since the previous sample (0 on the first, or where
    ``/proc/stat`` cannot be read)."""

    def __init__(self, cpus: set[int] | None = None, read_stat: Callable[[], str] | None = None) -> None:
        self.cpus = cpus if cpus is not None else allowed_cpus()
        self._read_stat = read_stat or _read_proc_stat
        self._ticks_per_s = os.sysconf("SC_CLK_TCK")
        self._last: tuple[int, int, float] | None = None

    def sample(self, own_cpu_s: float | None = None) -> float:
        """Cores used by other processes since the last call; ``own_cpu_s``: this process's CPU time
        (default: ``time.process_time()``), which is left out."""
        own = time.process_time() if own_cpu_s is None else own_cpu_s
        try:
            busy, total = parse_proc_stat(self._read_stat(), self.cpus)
        except (OSError, ValueError):
            return 0.0
        last, self._last = self._last, (busy, total, own)
        if last is None or total <= last[1]:
            return 0.0
        per_cpu_ticks = (total - last[1]) / len(self.cpus)
        others = (busy - last[0] - (own - last[2]) * self._ticks_per_s) / per_cpu_ticks
        return min(float(len(self.cpus)), max(0.0, others))


def _read_proc_stat() -> str:
    with open("/proc/stat", encoding="ascii") as stat:
        return stat.read()


class CpuThreads:
    """The engine thread's torch thread count: ``cap`` on a quiet machine, fewer while other processes
    hold cores (``adaptive``), else always ``cap``. Call :meth:`apply` in the engine's thread before
    each step; it samples at most every ``interval_s``."""

    def __init__(
        self,
        cap: int,
        adaptive: bool = True,
        interval_s: float = INTERVAL_S,
        load: OtherLoad | None = None,
        set_threads: Callable[[int], None] | None = None,
        get_threads: Callable[[], int] | None = None,
    ) -> None:
        self.cap = max(1, cap)
        self.adaptive = adaptive
        self.interval_s = interval_s
        self.load = load or OtherLoad()
        self._set_threads = set_threads or _torch_set_num_threads
        self._get_threads = get_threads or _torch_get_num_threads
        self.choice = ThreadChoice(self.cap)
        self.changes = 0
        self._next_sample = 0.0

    @property
    def threads(self) -> int:
        """The thread count the next step runs with."""
        return self.choice.threads

    def restart(self, now: float | None = None) -> None:
        """Forget the load seen so far: the count goes back to ``cap`` and the next sample covers only
        the time from now (a benchmark's other engine has ended its turn; that load is gone)."""
        now = time.monotonic() if now is None else now
        self.choice = ThreadChoice(self.cap)
        if self.adaptive:
            self.load.sample()
            self._next_sample = now + self.interval_s

    def apply(self, now: float | None = None) -> int:
        """Samples the other processes' load when due, and sets this thread's torch thread count when
        it differs (asked of torch each time: another engine in the same thread may have set its own);
        returns it."""
        now = time.monotonic() if now is None else now
        if self.adaptive and now >= self._next_sample:
            self._next_sample = now + self.interval_s
            others = self.load.sample()
            choice = next_threads(self.choice, self.cap, len(self.load.cpus), others)
            if choice.threads != self.choice.threads:
                log.info(
                    "torch threads %d -> %d: other processes use %.1f of %d cores",
                    self.choice.threads,
                    choice.threads,
                    others,
                    len(self.load.cpus),
                )
                self.changes += 1
            self.choice = choice
        if self._get_threads() != self.choice.threads:
            self._set_threads(self.choice.threads)
        return self.choice.threads


def _torch_set_num_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


def _torch_get_num_threads() -> int:
    import torch

    return torch.get_num_threads()


def engine_cpu_threads(device_type: str, adaptive: bool = True) -> CpuThreads | None:
    """The thread control of an engine on ``device_type`` ("cpu", "cuda"): none off the CPU; on it,
    capped at the thread count torch has in the calling thread (``--threads``, else one per core)."""
    if device_type != "cpu":
        return None
    import torch

    return CpuThreads(torch.get_num_threads(), adaptive)
