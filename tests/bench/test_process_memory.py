"""The memory sampler of ``codedraft bench index`` counts this process and its live children."""

from __future__ import annotations

import multiprocessing
import sys

import pytest

from bench.process_memory import ProcessTreeMemory


def _hold(ready: object, release: object) -> None:
    block = bytearray(64 * 1024 * 1024)  # 64 MiB, touched so it is resident
    for offset in range(0, len(block), 4096):
        block[offset] = 1
    ready.set()  # type: ignore[attr-defined]
    release.wait(30)  # type: ignore[attr-defined]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_child_holding_64_mib_counts_in_the_sum() -> None:
    context = multiprocessing.get_context("spawn")
    ready, release = context.Event(), context.Event()
    alone = ProcessTreeMemory()
    alone.sample()
    child = context.Process(target=_hold, args=(ready, release))
    child.start()
    try:
        assert ready.wait(60)
        together = ProcessTreeMemory()
        together.sample()
    finally:
        release.set()
        child.join(30)
    assert (alone.peaks.processes, together.peaks.processes) == (1, 2)
    assert together.peaks.rss_mb - alone.peaks.rss_mb > 64
    assert together.peaks.pss_mb - alone.peaks.pss_mb > 64
