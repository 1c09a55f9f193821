"""Cancel-storm benchmark (`codedraft bench cancel-storm`): many clients cancelling, superseding,
disconnecting and running past short deadlines, alone and beside a second busy daemon.

The measured daemon is a real `codedraft daemon` subprocess on the default model (no `--model`:
SmolLM2-135M where it is installed) or `--model PATH`. The storm (`bench/storm_actions.py`): by
default 200 requests from 16 concurrent clients, each request with one action of finish, cancel
mid-stream, short deadline, disconnect or Generate, two clients per session; every request but a
short-deadline one carries a `--deadline-s` (120 s) gRPC deadline. Prompts are FIM completions at line
starts of this repository's engine sources (`--context-lines` above and below), 16-64 new tokens (200
for those cancelled or dropped mid-stream), greedy, speculation off (as `bench daemon`); a Generate
request sends the completion's prefix as its raw prompt. A client sends its next request as soon as
its last one ends, so 16 requests are in flight throughout (a closed loop).

The storm runs once per phase of `--phases`, one after another in one run (default `alone,beside`):
`alone` with no other daemon; `beside` with a second `codedraft daemon` on the same model, started for
the phase and kept busy throughout it by `--second-clients` clients of its own, each sending 128-token
Generate requests one after another. Both phases draw
the same actions; cursor positions differ, so one phase does not reuse the other's cached prompts.
`--busy N` adds N processes spinning a core each (`bench/busy_cores.py`) to every phase.

Per phase: outcomes per action, long-deadline requests that ran out of time (must be none) or ended
otherwise unexpectedly, latency of finished requests, both daemons' tokens/s meanwhile (the generated
tokens each daemon's stats count as its requests end, over the phase's wall time); then the
measured daemon must become idle with no KV block held and answer a fresh request. The exit status is
1 when any of that fails, with the reasons printed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

from bench.busy_cores import CpuBurners
from bench.storm_actions import DONE, plan_storm, run_storm
from bench.storm_report import IDLE_TIMEOUT_S, PhaseResult, PoolCheck, failures, print_report
from bench.timed_completions import cursor_requests
from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import InferenceClient
from inference.daemon_launcher import PrivateDaemon
from inference.defaults import REPO_ROOT
from inference.server.address import DaemonAddress

PHASES = ("alone", "beside")
SOURCES = REPO_ROOT / "inference" / "engine"


def storm_prompts(sources: Path, count: int, seed: int, context_lines: int) -> list[pb.CompleteRequest]:
    """``count`` completions at line starts of the ``.py`` files of ``sources`` with 100 lines or more,
    spread evenly over them."""
    files = sorted(p for p in sources.glob("*.py") if p.read_text(encoding="utf-8").count("\n") >= 100)
    if not files:
        raise ValueError(f"no source file of 100 lines or more in {sources}")
    prompts: list[pb.CompleteRequest] = []
    for n, source in enumerate(files):
        share = count // len(files) + (n < count % len(files))
        if share:
            prompts += cursor_requests(source, share, seed + n, 0, context_lines)
    return prompts


@contextlib.asynccontextmanager
async def started(daemon: PrivateDaemon) -> AsyncIterator[InferenceClient]:
    """A client of ``daemon`` once it serves; the daemon is stopped on leaving."""
    try:
        async with InferenceClient(daemon.address) as client:
            await daemon.wait_ready(client)
            yield client
    finally:
        await daemon.stop_async(timeout_s=60)


async def keep_generating(address: DaemonAddress, prompts: list[pb.CompleteRequest], index: int) -> None:
    """One client of the second daemon: Generate requests one after another until cancelled."""
    async with InferenceClient(address) as client:
        for n in range(sys.maxsize):
            prompt = prompts[(index + n) % len(prompts)].prefix
            sampling = pb.SamplingParams(max_tokens=128)
            await InferenceClient.collect(
                client.generate(pb.GenerateRequest(prompt=prompt, sampling=sampling))
            )


async def second_rate(second: InferenceClient, before: pb.Stats, began: float) -> float:
    """The second daemon's generated tokens per second since ``began``. Its stats count a request's
    tokens when it ends, so a storm shorter than one of its requests would count none: the window
    then runs on until one has ended (at most ``IDLE_TIMEOUT_S``)."""
    deadline = time.monotonic() + IDLE_TIMEOUT_S
    while True:
        after = await second.stats()
        grown = after.generated_tokens - before.generated_tokens
        if grown > 0 or time.monotonic() > deadline:
            return grown / (time.perf_counter() - began)
        await asyncio.sleep(0.05)


async def pool_after(client: InferenceClient, timeout_s: float = IDLE_TIMEOUT_S) -> PoolCheck:
    """Waits until no request is live or queued and no KV block is held (the engine gives a request's
    blocks back just after its stream ends); what the pool holds then, or at ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        stats = await client.stats()
        idle = stats.requests_active == stats.queue_depth == 0
        if (idle and stats.kv_blocks_used == 0) or time.monotonic() > deadline:
            return PoolCheck(idle, stats.kv_blocks_used, stats.requests_total, stats.requests_finished)
        await asyncio.sleep(0.05)


async def fresh_answer(client: InferenceClient, prompt: pb.CompleteRequest, deadline_s: float) -> str:
    """The outcome of one new completion after the storm: "done" or what went wrong."""
    request = pb.CompleteRequest()
    request.CopyFrom(prompt)
    request.request_id, request.session_id = "", "fresh"
    request.sampling.max_tokens = 16
    try:
        result = await InferenceClient.collect(client.complete(request, timeout=deadline_s))
    except Exception as error:  # any failure is the finding; the report names it
        return f"failed: {error}"
    return "done" if result.finish_reason in DONE else result.finish_reason_name


async def run_phase(
    phase: str, index: int, measured: InferenceClient, args: argparse.Namespace
) -> PhaseResult:
    """The storm once, alone or beside a second daemon kept generating; then the pool and a fresh request."""
    prompts = storm_prompts(args.sources, args.requests, args.seed + 1000 * (index + 1), args.context_lines)
    planned = plan_storm(prompts, args.clients, args.seed, args.deadline_s, f"{phase}{index}")
    second_tokens: float | None = None
    async with contextlib.AsyncExitStack() as stack:
        second: InferenceClient | None = None
        workers: list[asyncio.Task[None]] = []
        if phase == "beside":
            daemon = PrivateDaemon(args.model, prefix="codedraft-storm-second-")
            second = await stack.enter_async_context(started(daemon))
            busy_prompts = storm_prompts(args.sources, 16, args.seed + 7, args.context_lines)
            workers = [
                asyncio.create_task(keep_generating(daemon.address, busy_prompts, n))
                for n in range(args.second_clients)
            ]
            await asyncio.sleep(1.0)  # the second daemon is generating before the storm starts
        before = await measured.stats()
        second_before = await second.stats() if second is not None else None
        began = time.perf_counter()
        outcomes = await run_storm(measured.address.grpc_target(), planned, args.clients)
        wall = time.perf_counter() - began
        if second is not None and second_before is not None:
            second_tokens = await second_rate(second, second_before, began)
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
    pool = await pool_after(measured)
    fresh = await fresh_answer(measured, prompts[0], args.deadline_s)
    after = await measured.stats()
    return PhaseResult(
        phase=phase,
        outcomes=outcomes,
        wall_s=wall,
        tokens_per_s=(after.generated_tokens - before.generated_tokens) / wall,
        second_tokens_per_s=second_tokens,
        requests_received=pool.requests_total - before.requests_total,
        pool=pool,
        fresh=fresh,
    )


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The command line; ``phases`` comes back as a list."""
    parser = argparse.ArgumentParser(prog="codedraft bench cancel-storm", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", type=Path, default=None, help="model of both daemons (default: the daemon's)"
    )
    parser.add_argument("--requests", type=int, default=200, help="requests per storm (default: 200)")
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients (default: 16)")
    parser.add_argument("--deadline-s", type=float, default=120.0, help="the long deadline (default: 120)")
    parser.add_argument(
        "--phases", default="alone,beside", help="storms in order: alone|beside (default: alone,beside)"
    )
    parser.add_argument(
        "--second-clients", type=int, default=2, help="clients of the second daemon (default: 2)"
    )
    parser.add_argument("--busy", type=int, default=0, help="cores kept busy by other processes meanwhile")
    parser.add_argument(
        "--context-lines", type=int, default=40, help="lines above and below the cursor (default: 40)"
    )
    parser.add_argument("--sources", type=Path, default=SOURCES, help="folder of the prompts' source files")
    parser.add_argument("--seed", type=int, default=0, help="seed of the actions and cursors (default: 0)")
    args = parser.parse_args(argv)
    args.phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    if not args.phases or any(p not in PHASES for p in args.phases):
        parser.error(
            f"--phases takes a comma-separated list of {', '.join(PHASES)}, got {', '.join(args.phases)!r}"
        )
    if args.model is not None and not args.model.exists():
        parser.error(f"--model {args.model} does not exist")
    if args.clients < 1 or args.requests < 1:
        parser.error("--clients and --requests must be at least 1")
    if not 0 < args.deadline_s < math.inf:
        parser.error(f"--deadline-s must be a number of seconds above 0, got {args.deadline_s:g}")
    if args.busy < 0 or args.second_clients < 0 or args.context_lines < 0:
        parser.error("--busy, --second-clients and --context-lines must be at least 0")
    return args


def run_storms(args: argparse.Namespace) -> tuple[pb.ModelInfo, list[PhaseResult]]:
    """The measured daemon started and warmed up (one request), then one storm per phase."""

    async def measure() -> tuple[pb.ModelInfo, list[PhaseResult]]:
        async with started(PrivateDaemon(args.model, prefix="codedraft-storm-")) as measured:
            info = await measured.model_info()
            warm_up = storm_prompts(args.sources, 1, args.seed, args.context_lines)[0]
            await fresh_answer(measured, warm_up, 600)
            return info, [await run_phase(phase, n, measured, args) for n, phase in enumerate(args.phases)]

    with CpuBurners(args.busy):
        return asyncio.run(measure())


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    info, results = run_storms(args)
    print_report(info, args, results)
    problems = failures(results)
    for problem in problems:
        print(f"FAILED: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
