"""``codedraft bench lsp``: what the language server adds to a completion, and how fast a cancel stops
the daemon.

One daemon (``--model``, the embedded model by default) and one ``codedraft lsp`` subprocess driven by
pygls' LSP client over stdio, as an editor would. For each completion at a cursor in a real source file
the benchmark takes the round trip the editor sees and the time the server waited on the daemon's
stream (from the ``codedraft/status`` notification), and prints the difference: the server's overhead
(document handling, retrieval, post-processing, JSON-RPC). Debounce is set to its minimum so it does
not count. Then it starts long completions and sends ``$/cancelRequest``, timing until the daemon
reports no active request.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from bench.timed_completions import daemon_process
from inference.client import InferenceClient
from inference.daemon_launcher import codedraft_command
from inference.defaults import REPO_ROOT, default_model_dir


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _row(label: str, values: list[float]) -> None:
    print(f"{label:<44}{_percentile(values, 0.5):>10.1f}{_percentile(values, 0.95):>10.1f}")


class BenchClient(LanguageClient):
    def __init__(self) -> None:
        super().__init__("codedraft-bench", "1")
        self.statuses: list[Any] = []

        @self.feature("codedraft/status")
        def on_status(params: Any) -> None:
            self.statuses.append(params)

        @self.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params: types.ConfigurationParams) -> list[Any]:
            return [None for _ in params.items]


def _cursors(text: str, count: int, seed: int) -> list[tuple[int, int]]:
    """Cursor positions at the ends of non-blank lines, spread over the file."""
    lines = text.split("\n")
    candidates = [(index, len(line)) for index, line in enumerate(lines) if line.strip() and index > 5]
    return random.Random(seed).sample(candidates, min(count, len(candidates)))


async def timed_inline_completion(
    client: LanguageClient, uri: str, line: int, character: int, trigger: types.InlineCompletionTriggerKind
) -> float:
    """The round trip (ms) of an inline completion at ``line``:``character`` of ``uri``."""
    started = time.perf_counter()
    await client.text_document_inline_completion_async(
        types.InlineCompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=character),
            context=types.InlineCompletionContext(trigger_kind=trigger),
        )
    )
    return (time.perf_counter() - started) * 1000


async def wait_until_indexed(client: BenchClient, timeout_s: float = 300.0) -> None:
    """Waits for the workspace index, so that indexing does not run beside the timed requests."""
    deadline = time.perf_counter() + timeout_s
    while time.perf_counter() < deadline:
        if client.statuses and getattr(client.statuses[-1], "state", "") not in ("indexing", ""):
            if any(getattr(s, "state", "") == "indexing" for s in client.statuses):
                return
        await asyncio.sleep(0.1)


async def _completion_overheads(
    client: BenchClient, uri: str, cursors: list[tuple[int, int]]
) -> list[tuple[float, float]]:
    samples: list[tuple[float, float]] = []
    for line, character in cursors:
        before = len(client.statuses)
        total_ms = await timed_inline_completion(
            client, uri, line, character, types.InlineCompletionTriggerKind.Invoked
        )
        await asyncio.sleep(0.01)
        last = next(
            (s for s in reversed(client.statuses[before:]) if getattr(s, "lastCompletion", None)), None
        )
        if last is None:
            continue  # suppressed or served from the suggestion cache: no daemon time to subtract
        samples.append((total_ms, float(last.lastCompletion.daemonMs)))
    return samples


async def _cancel_latencies(
    client: BenchClient, daemon: InferenceClient, uri: str, cursors: list[tuple[int, int]]
) -> list[float]:
    latencies: list[float] = []
    for index, (line, character) in enumerate(cursors):
        msg_id = f"bench-cancel-{index}"
        params = types.InlineCompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=character),
            context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Invoked),
        )
        client.protocol.send_request(types.TEXT_DOCUMENT_INLINE_COMPLETION, params, msg_id=msg_id)
        deadline = time.perf_counter() + 10
        while (await daemon.stats()).requests_active == 0 and time.perf_counter() < deadline:
            await asyncio.sleep(0.002)
        started = time.perf_counter()
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
        while (await daemon.stats()).requests_active > 0 and time.perf_counter() < deadline:
            await asyncio.sleep(0.001)
        if time.perf_counter() < deadline:
            latencies.append((time.perf_counter() - started) * 1000)
    return latencies


async def _run(args: argparse.Namespace) -> int:
    source = Path(args.file)
    text = source.read_text(encoding="utf-8")
    with (
        tempfile.TemporaryDirectory(prefix="codedraft-bench-lsp-") as tmp,
        daemon_process(Path(args.model), None, 1) as process,
    ):
        address = process.address
        async with InferenceClient(address) as daemon:
            await process.wait_ready(daemon)
            info = await daemon.model_info()
            client = BenchClient()
            env = {**os.environ, "XDG_CACHE_HOME": f"{tmp}/cache"}
            await client.start_io(
                *codedraft_command("--log-level", "warning", "lsp", "--daemon", str(address)), env=env
            )
            settings = {"completion": {"debounceMs": 1, "maxDebounceMs": 1, "maxTokens": args.max_tokens}}
            await client.initialize_async(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(),
                    root_uri=REPO_ROOT.as_uri(),
                    initialization_options=settings,
                )
            )
            client.initialized(types.InitializedParams())
            uri = source.resolve().as_uri()
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
                )
            )
            await wait_until_indexed(client)
            cursors = _cursors(text, args.requests + args.cancels, args.seed)
            await _completion_overheads(client, uri, cursors[:3])  # warm-up: connection, caches
            samples = await _completion_overheads(client, uri, cursors[3 : args.requests])
            client.protocol.notify(
                types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                types.DidChangeConfigurationParams(
                    settings={"completion": {"maxTokens": info.max_new_tokens}}
                ),
            )
            cancels = await _cancel_latencies(client, daemon, uri, cursors[args.requests :])
            await client.shutdown_async(None)
            client.exit(None)
            await client.stop()
    overhead = [total - daemon_ms for total, daemon_ms in samples]
    totals = [total for total, _ in samples]
    print(f"codedraft bench lsp: model {info.model.name} ({info.device}), file {source.name}")
    print(f"{len(samples)} timed completions, {len(cancels)} timed cancellations")
    print(f"{'figure':<44}{'p50':>10}{'p95':>10}")
    _row("completion round trip (ms)", totals)
    _row("server overhead = round trip - daemon (ms)", overhead)
    if cancels:
        _row("cancel: $/cancelRequest -> daemon idle (ms)", cancels)
    share = statistics.median(o / t for o, t in zip(overhead, totals, strict=True))
    print(f"overhead share of the round trip (median): {share:.1%}")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="codedraft bench lsp", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model", default=str(default_model_dir()), help="model directory (default: embedded model)"
    )
    parser.add_argument(
        "--file",
        default=str(REPO_ROOT / "lsp_server" / "completion" / "service.py"),
        help="source file to complete in",
    )
    parser.add_argument("--requests", type=int, default=40, help="completions to time (default: 40)")
    parser.add_argument("--cancels", type=int, default=10, help="cancellations to time (default: 10)")
    parser.add_argument(
        "--max-tokens", type=int, default=48, help="max tokens per timed completion (default: 48)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for the cursor positions")
    args = parser.parse_args(argv)
    if not Path(args.model).is_dir():
        print(f"codedraft bench lsp: no model at {args.model} (pass --model DIR)", file=sys.stderr)
        return 2
    return asyncio.run(_run(args))
