"""The busy levels' burners: they spin, and none outlives its block or the benchmark."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from bench.busy_cores import CpuBurners, parse_busy_levels


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its new parent to reap it has ended)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_levels_parse_and_bad_ones_are_refused() -> None:
    assert parse_busy_levels("0,1,2") == [0, 1, 2]
    for bad in ("", "a", "1,-1"):
        with pytest.raises(ValueError, match="--busy"):
            parse_busy_levels(bad)


def test_burners_spin_and_are_reaped_when_the_block_ends() -> None:
    with CpuBurners(2) as burners:
        pids = [p.pid for p in burners.processes]
        assert len(pids) == 2
        time.sleep(0.5)
        assert all(p.poll() is None for p in burners.processes)
        for pid in pids:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                assert int(stat.read().rsplit(")", 1)[1].split()[11]) > 0  # user time: busy, not asleep
    assert burners.processes == []
    assert not any(_alive(pid) for pid in pids)


def test_burners_are_reaped_when_the_block_raises() -> None:
    with pytest.raises(RuntimeError), CpuBurners(1) as burners:
        pid = burners.processes[0].pid
        raise RuntimeError("the benchmark failed")
    assert not _alive(pid)


def test_burners_end_by_themselves_when_the_benchmark_is_killed() -> None:
    script = (
        "import time\n"
        "from bench.busy_cores import CpuBurners\n"
        "burners = CpuBurners(1).start()\n"
        "print(burners.processes[0].pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    pid = int(parent.stdout.readline())
    assert _alive(pid)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)
