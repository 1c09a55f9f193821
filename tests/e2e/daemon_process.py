"""A real ``codedraft daemon`` subprocess for end-to-end tests."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from inference.client import InferenceClient
from tests.e2e.lsp_harness import CODEDRAFT


@dataclass(frozen=True)
class DaemonHandle:
    """A running daemon: its address and its process."""

    address: str
    process: subprocess.Popen[bytes]


@contextlib.contextmanager
def running_daemon(model: Path, socket: Path, log: Path) -> Iterator[DaemonHandle]:
    """Starts ``codedraft daemon --model MODEL --no-draft`` on ``socket``, waits until it serves, and
    stops it with SIGTERM at the end."""
    address = f"unix:{socket}"
    socket.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(log, "ab") as log_file:
        process = subprocess.Popen(
            [
                CODEDRAFT,
                "daemon",
                "--model",
                str(model),
                "--no-draft",
                "--listen",
                address,
                "--device",
                "cpu",
                "--kv-cache-mb",
                "64",
            ],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        # in a thread of its own: the caller may be inside a running event loop
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, _wait_ready(address, process)).result()
        yield DaemonHandle(address, process)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def _wait_ready(address: str, process: subprocess.Popen[bytes]) -> None:
    async with InferenceClient(address) as client:
        for _ in range(600):
            if process.poll() is not None:
                raise RuntimeError(f"the daemon exited with status {process.returncode}")
            if await client.health(timeout=0.5) == "SERVING":
                return
            await asyncio.sleep(0.1)
    raise RuntimeError("the daemon did not become ready in 60 s")


async def daemon_stats(address: str) -> dict[str, float]:
    """The daemon's GetStats counters as a dict."""
    from google.protobuf.json_format import MessageToDict

    async with InferenceClient(address) as client:
        stats = await client.stats(timeout=5.0)
    return {
        key: float(value) for key, value in MessageToDict(stats, preserving_proto_field_name=True).items()
    }


async def wait_until_active(address: str) -> None:
    """Waits until the daemon reports a running request (30 s at most)."""
    async with InferenceClient(address) as client:
        for _ in range(3000):
            if (await client.stats(timeout=5.0)).requests_active >= 1:
                return
            await asyncio.sleep(0.01)
    raise AssertionError("no request reached the daemon")
