"""Network benchmark (`codedraft bench network`): what the HTTP face and a daemon in front of a remote
engine cost over direct gRPC calls, as ratios measured side by side in one run; with `--backend URL`,
a remote engine behind `codedraft daemon --backend` under 1/4/16 clients, and with `--versus MODEL`
codedraft's own engine on the same model beside it, level by level (the same requests through each).

Overheads: one `codedraft daemon` subprocess serves the embedded model over gRPC and `--http`; a
second one runs `--backend openai:` in front of that HTTP face. Each completion goes through the three
paths in turn (direct gRPC, OpenAI `/v1/completions` with `suffix`, gRPC to the front daemon), every
path's copy carrying its own first line so none reuses another's KV: all three compute the same
prompt cold on the same engine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp

from bench.timed_completions import Timing, cursor_requests, run_level, table_row, via_grpc
from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import InferenceClient
from inference.daemon_launcher import codedraft_command
from inference.defaults import REPO_ROOT, default_model_dir
from inference.server.address import DaemonAddress

PATHS = ("grpc", "openai-http", "backend")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def _daemon(*flags: str) -> Iterator[None]:
    argv = codedraft_command("--log-level", "warning", "daemon", *flags)
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    try:
        yield
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


async def _via_openai(session: aiohttp.ClientSession, base_url: str, request: pb.CompleteRequest) -> Timing:
    body = {
        "prompt": request.prefix,
        "suffix": request.suffix,
        "max_tokens": request.sampling.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    started = time.perf_counter()
    first: float | None = None
    generated = 0
    async with session.post(f"{base_url}/completions", json=body) as reply:
        reply.raise_for_status()
        async for line in reply.content:
            if not line.startswith(b"data: {"):
                continue
            event = json.loads(line[len(b"data: ") :])
            if first is None and any(c.get("text") for c in event["choices"]):
                first = time.perf_counter() - started
            if event.get("usage"):
                generated = event["usage"]["completion_tokens"]
    total = time.perf_counter() - started
    return Timing(first if first is not None else total, total, generated)


def _tagged(request: pb.CompleteRequest, tag: str) -> pb.CompleteRequest:
    copy = pb.CompleteRequest()
    copy.CopyFrom(request)
    copy.prefix = f"# {tag}\n{request.prefix}"
    copy.path = copy.language = ""  # the OpenAI API carries neither: every path builds the same prompt
    copy.speculation = pb.SPECULATION_MODE_UNSPECIFIED
    return copy


async def _overheads(
    direct: DaemonAddress, front: DaemonAddress, base_url: str, requests: list[pb.CompleteRequest]
) -> dict[str, list[Timing]]:
    timings: dict[str, list[Timing]] = {path: [] for path in PATHS}
    async with InferenceClient(direct) as a, InferenceClient(front) as b, aiohttp.ClientSession() as http:
        await a.wait_ready(timeout=300)
        await b.wait_ready(timeout=300)
        for index, request in enumerate(requests):
            order = PATHS[index % 3 :] + PATHS[: index % 3]  # rotate: each path goes first as often
            for path in order:
                tagged = _tagged(request, f"copy {PATHS.index(path)} of {index}")
                if path == "grpc":
                    timings[path].append(await via_grpc(a, tagged))
                elif path == "openai-http":
                    timings[path].append(await _via_openai(http, base_url, tagged))
                else:
                    timings[path].append(await via_grpc(b, tagged))
    return timings


def _backend_levels(args: argparse.Namespace, folder: Path, front: DaemonAddress) -> None:
    """The remote engine behind a front daemon (and codedraft's own engine beside it) per client level."""
    remote = ["--backend", args.backend, "--backend-model", str(args.backend_model)]
    remote += ["--backend-tokenizer", str(args.backend_tokenizer), "--listen", str(front)]
    own = DaemonAddress(unix_path=folder / "own.sock")
    own_flags = ["--model", str(args.versus), "--no-draft", "--device", "cpu", "--listen", str(own)]
    own_flags += ["--threads", str(args.threads)] if args.threads else []
    levels = [int(n) for n in args.levels.split(",")]
    paths = {"backend": front} | ({"own engine": own} if args.versus else {})

    async def measure() -> list[tuple[int, str, list[Timing], float]]:
        for address in paths.values():
            async with InferenceClient(address) as client:
                await client.wait_ready(timeout=300)
        rows = []
        for level in levels:
            requests = cursor_requests(args.source, args.requests, level, args.max_tokens)
            for label, address in paths.items():  # the same requests, one path after the other
                rows.append((level, label, *await run_level(address, requests, level)))
        return rows

    with contextlib.ExitStack() as stack:
        stack.enter_context(_daemon(*remote))
        if args.versus:
            stack.enter_context(_daemon(*own_flags))
        rows = asyncio.run(measure())
    print(f"codedraft bench network: codedraft daemon --backend {args.backend} ({args.backend_model})")
    if args.versus:
        print(f"beside codedraft's own engine on {args.versus} (threads: {args.threads or 'default'})")
    header = ["clients", "requests", "ttft p50 ms", "ttft p95 ms", "latency p50 ms", "tokens/req"]
    widths = [8, 9, 12, 12, 15, 11, 15]
    columns = zip([*header, "tokens/s total"], widths, strict=True)
    print(f"{'path':>11} " + " ".join(f"{h:>{w}}" for h, w in columns))
    for level, label, timings, wall in rows:
        print(f"{label:>11} {table_row(str(level), timings, wall)}")
    if args.versus:
        print("own engine / backend, per level: ttft p50 ratio, tokens/s ratio")
        by = {(level, label): (timings, wall) for level, label, timings, wall in rows}
        for level in levels:
            (own_t, own_wall), (far_t, far_wall) = by[level, "own engine"], by[level, "backend"]
            ttft = statistics.median(t.first_token_s for t in own_t) / statistics.median(
                t.first_token_s for t in far_t
            )
            rate = (sum(t.generated for t in own_t) / own_wall) / max(
                sum(t.generated for t in far_t) / far_wall, 1e-9
            )
            print(f"{level:>11} clients: first token {ttft:.2f}x, tokens/s {rate:.2f}x")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="codedraft bench network", description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=default_model_dir(), help="model (default: embedded)")
    parser.add_argument(
        "--source", type=Path, default=REPO_ROOT / "inference" / "server" / "servicer.py", help="cursor file"
    )
    parser.add_argument(
        "--requests", type=int, default=12, help="completions per path or level (default: 12)"
    )
    parser.add_argument("--max-tokens", type=int, default=16, help="tokens per completion (default: 16)")
    parser.add_argument("--backend", default=None, help="openai:URL of a remote engine to measure instead")
    parser.add_argument("--backend-model", default=None, help="the engine's model name (with --backend)")
    parser.add_argument("--backend-tokenizer", type=Path, default=None, help="its tokenizer folder")
    parser.add_argument(
        "--levels", default="1,4,16", help="clients per level with --backend (default: 1,4,16)"
    )
    parser.add_argument(
        "--versus", type=Path, default=None, help="with --backend: also codedraft's own engine on this model"
    )
    parser.add_argument("--threads", type=int, default=None, help="CPU threads of codedraft's own engine")
    args = parser.parse_args(argv)
    if args.versus is not None and args.backend is None:
        parser.error("--versus compares codedraft's own engine with a --backend; give --backend too")
    folder = Path(tempfile.mkdtemp(prefix="codedraft-bench-net-"))
    try:
        front = DaemonAddress(unix_path=folder / "front.sock")
        if args.backend is not None:
            _backend_levels(args, folder, front)
            return 0
        direct = DaemonAddress(unix_path=folder / "direct.sock")
        port = _free_port()
        base_url = f"http://127.0.0.1:{port}/v1"
        own = ["--model", str(args.model), "--no-draft", "--device", "cpu", "--listen", str(direct)]
        own += ["--threads", str(args.threads)] if args.threads else []
        with _daemon(*own, "--http", f"tcp:127.0.0.1:{port}"):

            async def model_name() -> str:
                async with InferenceClient(direct) as client:
                    await client.wait_ready(timeout=300)
                    return (await client.model_info()).model.name

            name = asyncio.run(model_name())
            remote = ["--backend", f"openai:{base_url}", "--backend-model", name]
            with _daemon(*remote, "--backend-tokenizer", str(args.model), "--listen", str(front)):
                requests = cursor_requests(args.source, args.requests, 0, args.max_tokens)
                by_path = asyncio.run(_overheads(direct, front, base_url, requests))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    mean = statistics.fmean
    base_first = mean(t.first_token_s for t in by_path["grpc"])
    base_total = mean(t.total_s for t in by_path["grpc"])
    print(
        f"codedraft bench network: {name}, {len(requests)} completions of at most {args.max_tokens} tokens "
        f"at line starts of {args.source.name}, each computed cold through every path"
    )
    columns = [("path", 12), ("ttft ms", 9), ("latency ms", 11), ("tokens/req", 11), ("ttft ratio", 11)]
    print(" ".join(f"{name:>{width}}" for name, width in [*columns, ("latency ratio", 14)]))
    for path in PATHS:
        first = mean(t.first_token_s for t in by_path[path])
        total = mean(t.total_s for t in by_path[path])
        tokens = mean(t.generated for t in by_path[path])
        print(
            f"{path:>12} {first * 1000:>9.1f} {total * 1000:>11.1f} {tokens:>11.1f} "
            f"{first / base_first:>10.2f}x {total / base_total:>13.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
