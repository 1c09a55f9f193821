"""A real ``codedraft daemon`` subprocess for end-to-end tests."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from inference.client import InferenceClient
from inference.daemon_launcher import DaemonProcess, daemon_command

READY_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class DaemonHandle:
    """A running daemon: its address and its process."""

    address: str
    process: DaemonProcess


@contextlib.contextmanager
def running_daemon(model: Path, socket: Path, log: Path) -> Iterator[DaemonHandle]:
    """Starts ``codedraft daemon --model MODEL --no-draft`` on ``socket``, waits until it serves, and
    stops it with SIGTERM at the end."""
    address = f"unix:{socket}"
    socket.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    argv = daemon_command(address, model=model, no_draft=True, device="cpu", kv_cache_mb=64)
    process = DaemonProcess(argv, log)
    try:
        # in a thread of its own: the caller may be inside a running event loop
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, _wait_ready(address, process)).result()
        yield DaemonHandle(address, process)
    finally:
        process.stop()


async def _wait_ready(address: str, process: DaemonProcess) -> None:
    async with InferenceClient(address) as client:
        await process.wait_ready(client, READY_TIMEOUT_S)


async def daemon_stats(address: str) -> dict[str, float]:
    """The daemon's GetStats counters as a dict."""
    from google.protobuf.json_format import MessageToDict

    async with InferenceClient(address) as client:
        stats = await client.stats(timeout=5.0)
    return {
        key: float(value) for key, value in MessageToDict(stats, preserving_proto_field_name=True).items()
    }


async def wait_until_active(address: str, timeout_s: float = 30.0) -> None:
    """Waits until the daemon reports a running request (``timeout_s`` at most)."""
    deadline = time.monotonic() + timeout_s
    async with InferenceClient(address) as client:
        while (left := deadline - time.monotonic()) > 0:
            if (await client.stats(timeout=max(0.1, min(5.0, left)))).requests_active >= 1:
                return
            await asyncio.sleep(0.01)
    raise AssertionError(f"no request reached the daemon in {timeout_s:g} s")
