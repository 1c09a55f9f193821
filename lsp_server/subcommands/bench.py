"""``codedraft bench NAME``: the benchmarks of ``bench/``, each printing ratios measured in one run."""

from __future__ import annotations

import argparse
import importlib

from lsp_server.subcommands.errors import not_implemented_yet

HELP = "run a benchmark: engine, daemon, index, lsp, network or model (ARGS go to it; try NAME --help)"

BENCHMARKS: dict[str, tuple[str, int, str]] = {
    "engine": ("bench.engine", 3, "KV reuse and speculative decoding, side by side"),
    "daemon": ("bench.daemon", 4, "gRPC throughput and latency under 1/4/16 clients"),
    "index": ("bench.index", 6, "index speed and retrieval latency and quality"),
    "lsp": ("bench.lsp", 7, "language-server overhead and cancel latency"),
    "network": ("bench.network", 17, "OpenAI face and remote-engine overhead over gRPC; a remote engine"),
    "model": ("bench.model_eval", 5, "the default model's evaluation"),
}


def configure(parser: argparse.ArgumentParser) -> None:
    lines = "; ".join(f"{name}: {what}" for name, (_, _, what) in BENCHMARKS.items())
    parser.add_argument("name", choices=sorted(BENCHMARKS), help=f"which benchmark ({lines})")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the benchmark")


def run(args: argparse.Namespace) -> int:
    module_name, issue, what = BENCHMARKS[args.name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name != module_name:
            raise
        raise not_implemented_yet(f"bench {args.name}", issue, what) from None
    return int(module.main(list(args.args)))
