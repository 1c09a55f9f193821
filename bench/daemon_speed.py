"""Daemon benchmark (`codedraft bench daemon`): gRPC throughput and latency under concurrent clients.

One `codedraft daemon` subprocess serves completions to 1, 4 and 16 concurrent clients (each client
sends its requests one after another); reported per level: time to first token as the client sees it
(p50, p95), request latency (p50) and generated tokens per second over the level's wall time.
The overhead of the gRPC path is measured against the same engine adapter called in-process, on the
same requests, one at a time, both starting from a cold prefix cache, as a ratio.

Completions are FIM requests at line starts of a source file of this repository (greedy, no draft
model, at most `--max-tokens` new tokens: a completion ends earlier when the model closes the middle;
tokens/req says how many came); different levels use different cursor positions. `--context-lines N`
keeps only the N lines above and below the cursor, so decoding rather than cold prompts dominates
(what batching speeds up). `--check-alone` sends every request of the concurrent levels again, one at
a time, and counts those whose text differs from what they gave under concurrency (it must be none:
a batched forward pass gives each request its output alone; the prompts are cached by then).
`--busy N` runs it all beside N processes spinning a core each (`bench/busy_cores.py`), and
`--fixed-threads` keeps the daemon's CPU threads at one per core meanwhile (as before it adapted).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.busy_cores import CpuBurners
from bench.timed_completions import Timing, cursor_requests, daemon_process, run_level, table_row, via_grpc
from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import InferenceClient
from inference.defaults import REPO_ROOT, default_model_dir
from inference.openmp import set_openmp_spin
from inference.server.address import DaemonAddress


async def _check_alone(
    address: DaemonAddress, requests: list[pb.CompleteRequest], timings: list[Timing], clients: int
) -> str:
    """Send each request again alone; a line saying how many texts equal those of the concurrent run."""
    # run_level's timings come client by client: client c sent requests[c::clients] in order.
    order = [i for c in range(clients) for i in range(c, len(requests), clients)]
    async with InferenceClient(address) as client:
        alone = [await via_grpc(client, requests[i]) for i in order]
    differ = sum(a.text != t.text for a, t in zip(alone, timings, strict=True))
    return f"{clients} clients: {len(order) - differ}/{len(order)} requests gave the text they give alone" + (
        "" if not differ else f" ({differ} DIFFER)"
    )


class InProcessEngine:
    """The same completions through the engine adapter the daemon uses, without gRPC."""

    def __init__(self, model: Path, kv_cache_mb: int | None, device: str, adapt_threads: bool) -> None:
        from inference.backends.local_model import ServeSettings, load_served_model
        from inference.config import EngineConfig

        # In a thread that ends, as the daemon loads: one thread runs torch's parallel work
        # (inference/openmp.py), here the engine's.
        with ThreadPoolExecutor(max_workers=1) as loader:
            settings = ServeSettings(model, None, device, adapt_threads=adapt_threads)
            self.served = loader.submit(
                load_served_model, settings, EngineConfig(kv_cache_mb=kv_cache_mb)
            ).result()
        self._count = 0

    async def complete(self, request: pb.CompleteRequest) -> Timing:
        from inference.config import SamplingParams
        from inference.engine.sequence import Request
        from inference.server.prompt_budget import PromptBudget, fit_completion

        served = self.served
        self._count += 1
        started = time.perf_counter()
        budget = PromptBudget(served.context_length, request.sampling.max_tokens)
        fitted = fit_completion(
            served.tokenizer, served.fim, budget, request.prefix, request.suffix, [], request.path, True
        )
        sampling = SamplingParams(
            max_tokens=request.sampling.max_tokens, stop_token_ids=tuple(sorted(served.fim.stop_token_ids))
        )
        first: float | None = None
        generated = 0
        engine_request = Request(f"bench-{self._count}", prompt_token_ids=fitted.token_ids, sampling=sampling)
        async for output in served.backend.generate(engine_request):
            if output.delta and first is None:
                first = time.perf_counter() - started
            generated = output.metrics.generated_tokens
        total = time.perf_counter() - started
        return Timing(first if first is not None else total, total, generated)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="codedraft bench daemon", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model",
        type=Path,
        default=default_model_dir(),
        help="model directory or GGUF file (default: embedded)",
    )
    parser.add_argument(
        "--source",
        type=Path,
        default=REPO_ROOT / "inference" / "server" / "servicer.py",
        help="the source file whose line starts are the cursor positions (default: the servicer)",
    )
    parser.add_argument("--levels", default="1,4,16", help="concurrent clients per level (default: 1,4,16)")
    parser.add_argument("--requests", type=int, default=32, help="requests per level (default: 32)")
    parser.add_argument("--max-tokens", type=int, default=16, help="tokens per completion (default: 16)")
    parser.add_argument(
        "--context-lines",
        type=int,
        default=None,
        help="keep at most this many lines above and below the cursor (default: the whole file)",
    )
    parser.add_argument(
        "--check-alone",
        action="store_true",
        help="send each request of the concurrent levels again alone and compare its text",
    )
    parser.add_argument(
        "--kv-cache-mb",
        type=int,
        default=None,
        help="KV pool of both engines in MiB (default: sized by the model)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch CPU threads of both engines (default: torch's choice)",
    )
    parser.add_argument("--device", default="cpu", help="where both engines run: cpu|cuda (default: cpu)")
    parser.add_argument("--busy", type=int, default=0, help="cores kept busy by other processes meanwhile")
    parser.add_argument(
        "--fixed-threads",
        action="store_true",
        help="keep both engines' CPU threads fixed (default: fewer while other processes hold cores)",
    )
    args = parser.parse_args(argv)
    if not args.model.exists():
        parser.error(f"--model {args.model} does not exist")
    levels = [int(n) for n in args.levels.split(",")]

    baseline_requests = cursor_requests(
        args.source,
        min(args.requests, 16),
        seed=0,
        max_tokens=args.max_tokens,
        context_lines=args.context_lines,
    )
    set_openmp_spin()  # as `codedraft daemon` does, before torch loads
    import torch

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    threads = torch.get_num_threads()
    local_engine = InProcessEngine(args.model, args.kv_cache_mb, args.device, not args.fixed_threads)
    with (
        CpuBurners(args.busy),
        daemon_process(args.model, args.kv_cache_mb, args.threads, args.device, args.fixed_threads) as daemon,
    ):
        address = daemon.address

        async def measure() -> tuple[
            list[Timing], list[Timing], list[tuple[int, list[Timing], float]], pb.ModelInfo, list[str]
        ]:
            async with InferenceClient(address) as client:
                await daemon.wait_ready(client)
                info = await client.model_info()
                # Alternate the two paths request by request so both see the same machine noise.
                local, remote = [], []
                for request in baseline_requests:
                    local.append(await local_engine.complete(request))
                    remote.append(await via_grpc(client, request))
            await local_engine.served.backend.close()
            rows, checks = [], []
            for level in levels:
                requests = cursor_requests(
                    args.source,
                    args.requests,
                    seed=level,
                    max_tokens=args.max_tokens,
                    context_lines=args.context_lines,
                )
                timings, wall = await run_level(address, requests, level)
                rows.append((level, timings, wall))
                if args.check_alone and level > 1:
                    checks.append(await _check_alone(address, requests, timings, level))
            return local, remote, rows, info, checks

        local, remote, rows, info, checks = asyncio.run(measure())

    print(
        f"codedraft bench daemon: {info.model.name} ({info.model.architecture}, "
        f"{info.model.parameters / 1e6:.1f}M parameters) on {info.device} {info.dtype}, "
        f"{'' if args.fixed_threads else 'at most '}{threads} thread(s) per engine; "
        f"at most {args.max_tokens} new tokens per completion "
        f"at line starts of {args.source.name}; no draft model; beside {args.busy} busy core(s), "
        f"CPU threads {'fixed' if args.fixed_threads else 'following the free cores'}"
    )
    header: list[tuple[str, int]] = [("clients", 8), ("requests", 9), ("ttft p50 ms", 12)]
    header += [("ttft p95 ms", 12), ("latency p50 ms", 15), ("tokens/req", 11), ("tokens/s total", 15)]
    print(" ".join(f"{name:>{width}}" for name, width in header))
    for level, timings, wall in rows:
        print(table_row(str(level), timings, wall))
    for line in checks:
        print(line)
    mean = statistics.fmean
    grpc_ttft, local_ttft = mean(t.first_token_s for t in remote), mean(t.first_token_s for t in local)
    grpc_total, local_total = mean(t.total_s for t in remote), mean(t.total_s for t in local)
    print(
        f"gRPC vs in-process, 1 client, the same {len(local)} requests from a cold cache: "
        f"time to first token {grpc_ttft * 1000:.1f} vs {local_ttft * 1000:.1f} ms "
        f"({grpc_ttft / local_ttft:.2f}x), request latency {grpc_total * 1000:.1f} vs "
        f"{local_total * 1000:.1f} ms "
        f"({grpc_total / local_total:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
