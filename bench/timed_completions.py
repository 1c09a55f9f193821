"""Timed completions against a daemon, shared by the daemon, network, LSP and cancel-storm benchmarks:
completion requests at line starts of a source file, one request timed through gRPC, a level of
concurrent clients, a private daemon process, and the table row a level is printed as."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import InferenceClient
from inference.daemon_launcher import PrivateDaemon
from inference.server.address import DaemonAddress


@dataclass
class Timing:
    """One request as the caller saw it."""

    first_token_s: float
    total_s: float
    generated: int
    text: str = ""


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def cursor_requests(
    source: Path, count: int, seed: int, max_tokens: int, context_lines: int | None = None
) -> list[pb.CompleteRequest]:
    """`count` completions at random line starts of `source` (prefix: text above, suffix: text below,
    each at most `context_lines` lines when given)."""
    text = source.read_text(encoding="utf-8")
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n" and i + 1 < len(text)]
    rng = random.Random(seed)
    picks = sorted(rng.sample(range(len(starts) // 10, len(starts)), count))
    lines = len(starts) if context_lines is None else context_lines
    return [
        pb.CompleteRequest(
            prefix=text[starts[max(0, i - lines)] : starts[i]],
            suffix=text[starts[i] : starts[i + lines] if i + lines < len(starts) else len(text)],
            path=source.name,
            language="python",
            sampling=pb.SamplingParams(max_tokens=max_tokens),
            speculation=pb.SPECULATION_MODE_OFF,
        )
        for i in picks
    ]


async def via_grpc(client: InferenceClient, request: pb.CompleteRequest) -> Timing:
    """One completion through ``client``, timed to its first text and to its last chunk."""
    started = time.perf_counter()
    first: float | None = None
    generated = 0
    text: list[str] = []
    async for chunk in client.complete(request, timeout=600):
        if chunk.text_delta and first is None:
            first = time.perf_counter() - started
        text.append(chunk.text_delta)
        if chunk.done:
            generated = chunk.figures.generated_tokens
    total = time.perf_counter() - started
    return Timing(first if first is not None else total, total, generated, "".join(text))


async def run_level(
    address: DaemonAddress, requests: list[pb.CompleteRequest], clients: int
) -> tuple[list[Timing], float]:
    """Requests split over `clients` concurrent clients; returns the timings and the wall time."""
    shares = [requests[i::clients] for i in range(clients)]
    connections = [InferenceClient(address) for _ in range(clients)]

    async def one_client(client: InferenceClient, share: list[pb.CompleteRequest]) -> list[Timing]:
        return [await via_grpc(client, request) for request in share]

    started = time.perf_counter()
    try:
        results = await asyncio.gather(*(one_client(c, s) for c, s in zip(connections, shares, strict=True)))
    finally:
        for connection in connections:
            await connection.close()
    return [t for ts in results for t in ts], time.perf_counter() - started


@contextlib.contextmanager
def daemon_process(
    model: Path,
    kv_cache_mb: int | None,
    threads: int | None,
    device: str = "cpu",
    fixed_threads: bool = False,
) -> Iterator[PrivateDaemon]:
    """A ``codedraft daemon`` on ``model`` (no draft) on a private socket, stopped on leaving."""
    daemon = PrivateDaemon(
        model,
        prefix="codedraft-bench-",
        device=device,
        kv_cache_mb=kv_cache_mb,
        threads=threads,
        fixed_threads=fixed_threads,
    )
    try:
        yield daemon
    finally:
        daemon.stop(timeout_s=60)


def table_row(label: str, timings: list[Timing], wall: float) -> str:
    """A level's row: requests, time to first token (p50, p95), latency p50, tokens per request and
    per second of ``wall``."""
    ttft = [t.first_token_s * 1000 for t in timings]
    latency = [t.total_s * 1000 for t in timings]
    tokens = sum(t.generated for t in timings)
    return (
        f"{label:>8} {len(timings):>9} {_percentile(ttft, 0.5):>12.1f} {_percentile(ttft, 0.95):>12.1f} "
        f"{_percentile(latency, 0.5):>15.1f} {tokens / len(timings):>11.1f} {tokens / wall:>15.1f}"
    )
