"""The CPU thread rule: threads follow the cores other processes leave free, with hysteresis; the
load sampler's arithmetic on /proc/stat; and the count set in the thread that runs the steps."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from inference.cpu_threads import (
    RAISE_WINDOWS,
    CpuThreads,
    OtherLoad,
    ThreadChoice,
    next_threads,
    parse_proc_stat,
)


@pytest.mark.parametrize(
    ("threads", "cap", "cores", "others", "expected"),
    [
        (2, 2, 2, 0.0, 2),  # quiet: one per core
        (2, 2, 2, 0.3, 2),  # a little background work shares less than DROP_SHARE of a core
        (2, 2, 2, 0.67, 1),  # a burner beside our two threads gets 2/3 of a core: drop one
        (2, 2, 2, 1.0, 1),
        (2, 2, 2, 2.0, 1),  # never below one
        (1, 2, 2, 1.0, 1),  # the burner keeps its core: stay on the free one
        (8, 8, 2, 0.0, 2),  # more threads asked for than cores: one per core
        (16, 16, 16, 3.2, 13),  # 12.8 cores free
        (13, 16, 16, 3.2, 13),
        (4, 4, 16, 0.0, 4),  # never above the cap
    ],
)
def test_threads_follow_the_free_cores(
    threads: int, cap: int, cores: int, others: float, expected: int
) -> None:
    assert next_threads(ThreadChoice(threads), cap, cores, others).threads == expected


def test_a_thread_comes_back_only_after_calm_samples_in_a_row() -> None:
    choice = ThreadChoice(1)
    seen = []
    for others in (0.1, 0.5, 0.1, 0.15, 0.0):  # the lull at 0.5 restarts the count
        choice = next_threads(choice, 2, 2, others)
        seen.append((choice.threads, choice.calm_samples))
    assert RAISE_WINDOWS == 2
    assert seen == [(1, 1), (1, 0), (1, 1), (2, 0), (2, 0)]


def test_between_the_drop_and_raise_thresholds_nothing_moves() -> None:
    assert next_threads(ThreadChoice(1), 2, 2, 0.3) == ThreadChoice(1)
    assert next_threads(ThreadChoice(2), 2, 2, 0.3) == ThreadChoice(2)


def test_a_raise_goes_as_far_as_the_free_cores() -> None:
    choice = next_threads(ThreadChoice(13, calm_samples=1), 16, 16, 0.0)
    assert choice == ThreadChoice(16)


STAT = """cpu  300 0 100 1000 50 0 0 0 0 0
cpu0 100 0 50 500 25 0 0 0 0 0
cpu1 200 0 50 500 25 0 0 10 0 0
intr 1 2 3
"""


def test_proc_stat_sums_busy_and_total_ticks_of_the_allowed_cpus() -> None:
    assert parse_proc_stat(STAT, {0, 1}) == (410, 1460)
    assert parse_proc_stat(STAT, {1}) == (260, 785)  # steal counts as busy, iowait as idle


def _stat(busy0: int, idle0: int, busy1: int, idle1: int) -> str:
    return f"cpu  0 0 0 0 0 0 0 0\ncpu0 {busy0} 0 0 {idle0} 0 0 0 0\ncpu1 {busy1} 0 0 {idle1} 0 0 0 0\n"


def test_other_load_leaves_out_this_process() -> None:
    tick = os.sysconf("SC_CLK_TCK")
    texts = iter([_stat(0, 0, 0, 0), _stat(tick, 0, tick // 2, tick // 2)])
    load = OtherLoad({0, 1}, lambda: next(texts))
    assert load.sample(own_cpu_s=10.0) == 0.0  # the first sample has nothing to compare with
    # Over one second per core: 1.5 cores busy, 0.5 of them this process's.
    assert load.sample(own_cpu_s=10.5) == pytest.approx(1.0)


def test_other_load_is_zero_without_proc_stat() -> None:
    def unreadable() -> str:
        raise OSError("no /proc")

    assert OtherLoad({0}, unreadable).sample() == 0.0


class FakeLoad(OtherLoad):
    def __init__(self, values: list[float]) -> None:
        super().__init__({0, 1}, lambda: "")
        self.values = values

    def sample(self, own_cpu_s: float | None = None) -> float:
        return self.values.pop(0)


def test_apply_sets_the_count_in_the_calling_thread_when_it_changes_and_samples_when_due() -> None:
    current = [2]
    calls: list[int] = []

    def set_threads(n: int) -> None:
        calls.append(n)
        current[0] = n

    threads = CpuThreads(2, True, 0.5, FakeLoad([1.0, 0.0, 0.0]), set_threads, lambda: current[0])
    assert threads.apply(now=0.0) == 1  # a burner on one of the two cores
    assert threads.apply(now=0.2) == 1  # not due: no sample
    assert threads.apply(now=0.5) == 1  # calm once
    current[0] = 2  # another engine in this thread set its own count
    assert threads.apply(now=0.6) == 1
    assert threads.apply(now=1.0) == 2  # calm twice: back to both cores
    assert calls == [1, 1, 2]
    assert threads.changes == 2


def test_restart_forgets_the_load_seen_and_samples_from_now() -> None:
    current = [2]
    load = FakeLoad([2.0, 2.0, 0.0, 1.0])
    threads = CpuThreads(2, True, 0.5, load, lambda n: current.__setitem__(0, n), lambda: current[0])
    assert threads.apply(now=0.0) == 1  # both cores busy
    threads.restart(now=1.0)  # the window from 0.0 to 1.0 is dropped (the sample of 2.0 taken then)
    assert load.values == [0.0, 1.0]
    assert threads.apply(now=1.2) == 2  # back at the cap, and no sample before 1.5
    assert threads.apply(now=1.5) == 2  # the window from 1.0: quiet
    assert threads.apply(now=2.0) == 1  # a burner again


def test_fixed_threads_never_sample() -> None:
    load = FakeLoad([])  # a sample would fail: nothing to pop
    current = [1]
    threads = CpuThreads(2, False, 0.5, load, lambda n: current.__setitem__(0, n), lambda: current[0])
    assert [threads.apply(now=t) for t in (0.0, 1.0, 2.0)] == [2, 2, 2]


def test_torch_threads_set_in_the_engine_thread_reach_its_operations() -> None:
    """OpenMP's count is per thread: set from the main thread it would not reach a running engine
    thread; CpuThreads.apply, called in the engine thread, does (a fresh interpreter, real torch)."""
    script = """
import threading, torch
from inference.cpu_threads import CpuThreads, OtherLoad
torch.set_num_threads(2)
torch.get_num_threads()  # this thread's OpenMP state starts here
seen = {}
def engine_thread():
    torch.ones(4) + 1  # the thread's OpenMP state starts here, with 2 threads
    torch.set_num_threads(2)
    load = OtherLoad({0, 1}, lambda: "")
    load.sample = lambda own_cpu_s=None: 2.0  # every core busy with other work
    threads = CpuThreads(2, True, 0.0, load)
    threads.apply()
    seen["engine"] = torch.get_num_threads()
t = threading.Thread(target=engine_thread)
t.start(); t.join()
print(seen["engine"], torch.get_num_threads())
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.split() == ["1", "2"]
