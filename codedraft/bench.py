"""``codedraft bench NAME``: the benchmarks of ``bench/``, each printing ratios measured in one run."""

from __future__ import annotations

import argparse
import importlib

HELP = (
    "run a benchmark: engine, next-edit-decode, daemon, cancel-storm, index, lsp, first-suggestion, network, "
    "model, next-edit, fix or versus-llamacpp (ARGS go to the benchmark; try NAME --help)"
)

BENCHMARKS: dict[str, tuple[str, str]] = {
    "engine": ("bench.engine", "KV reuse and speculative decoding, side by side"),
    "next-edit-decode": (
        "bench.next_edit_decode",
        "next-edit region rewrites: prompt lookup with the draft limit vs plain; cache after a keystroke",
    ),
    "daemon": ("bench.daemon_speed", "gRPC throughput and latency under 1/4/16 clients"),
    "cancel-storm": (
        "bench.cancel_storm",
        "200 requests cancelling, superseding and timing out, alone and beside a second busy daemon",
    ),
    "index": ("bench.index", "index speed and retrieval latency and quality"),
    "lsp": ("bench.lsp", "language-server overhead and cancel latency"),
    "first-suggestion": (
        "bench.lsp_first_suggestion",
        "the first suggestion after opening a file and moving the cursor: prefill off, on, warm",
    ),
    "network": ("bench.network", "OpenAI face and remote-engine overhead over gRPC; a remote engine"),
    "model": (
        "bench.cursor_infill",
        "suggestions at held-out cursors as the editor asks, the served model's or --model PATH's",
    ),
    "next-edit": (
        "bench.next_edit.command",
        "next-edit suggestions replayed from encode/httpx's history through the language server",
    ),
    "versus-llamacpp": (
        "bench.versus_llamacpp",
        "codedraft against llama.cpp on one GGUF file, side by side",
    ),
    "fix": ("bench.fix_agent", "the fix agent on one-line bugs with failing tests: fixed rate and steps"),
}


def configure(parser: argparse.ArgumentParser) -> None:
    lines = "; ".join(f"{name}: {what}" for name, (_, what) in BENCHMARKS.items())
    parser.add_argument("name", choices=sorted(BENCHMARKS), help=f"which benchmark ({lines})")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the benchmark")


def run(args: argparse.Namespace) -> int:
    module_name, _ = BENCHMARKS[args.name]
    module = importlib.import_module(module_name)
    return int(module.main(list(args.args)))
