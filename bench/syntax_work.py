"""``python -m bench.syntax_work``: the language server's own syntax work for a suggestion in a large
file, and how long it holds the event loop.

A ``CompletionService`` with a scripted daemon stream (the daemon is not what is measured) completes
at a cursor in the middle of a large Python file (the standard library's ``typing.py``, about 120k
characters) while the user types: one request per keystroke, each answered with the same multi-line
suggestion whose last line does not parse, so the post-processing tries shorter candidates. For each
request it reports the time the server took besides the debounce, the longest time the event loop
could not run another task (a ticker task wakes every half millisecond), and the tree-sitter parses
it ran, full and incremental (counted by wrapping ``tree_sitter.Parser``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sysconfig
import time
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any, TypeVar

import tree_sitter

from inference.api.codedraft.v1 import inference_pb2 as pb

SUGGESTION = (
    "value = normalize(raw)\n    if value is None:\n        return default\n"
    "    else value:\n        return value"
)
TYPED = "abcdefghijklmnopqrstuvwxyz"
_REAL_PARSER = tree_sitter.Parser
T = TypeVar("T")


class _ParseCounts:
    full = 0
    incremental = 0


class _CountingParser:
    """Stands in for ``tree_sitter.Parser`` and counts the parses, full and incremental."""

    def __init__(self, language: tree_sitter.Language) -> None:
        self._parser = _REAL_PARSER(language)

    def parse(self, source: Any, old_tree: tree_sitter.Tree | None = None, **kwargs: Any) -> Any:
        if old_tree is None:
            _ParseCounts.full += 1
            return self._parser.parse(source, **kwargs)
        _ParseCounts.incremental += 1
        return self._parser.parse(source, old_tree, **kwargs)


def large_document() -> tuple[str, int]:
    """typing.py with an empty indented line at the start of a function body in its second half; the
    cursor is at the end of that line."""
    text = (Path(sysconfig.get_paths()["stdlib"]) / "typing.py").read_text(encoding="utf-8")
    start = text.index("\ndef ", len(text) // 2) + 1
    body = text.index("\n", start) + 1
    return text[:body] + "    \n" + text[body:], body + 4


async def _stream(request: pb.CompleteRequest, timeout_s: float) -> AsyncIterator[pb.CompleteChunk]:
    yield pb.CompleteChunk(text_delta=SUGGESTION)
    yield pb.CompleteChunk(done=True, finish_reason=pb.FINISH_REASON_EOS)


async def _watched(work: Awaitable[T]) -> tuple[T, float, float]:
    """``work``'s result, its wall time and the longest the loop could not run a ticker task meanwhile
    (both in ms; the ticker sleeps half a millisecond between wake-ups)."""
    gaps: list[float] = []
    done = asyncio.Event()

    async def tick() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.0005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticker = asyncio.ensure_future(tick())
    await asyncio.sleep(0.002)
    started = time.perf_counter()
    result = await work
    elapsed = time.perf_counter() - started
    done.set()
    await ticker
    return result, elapsed * 1000.0, (max(gaps) - 0.0005) * 1000.0


async def _measure(requests: int) -> list[dict[str, float]]:
    from lsp_server.completion.request import CompletionQuery
    from lsp_server.completion.service import CompletionService
    from lsp_server.config import CompletionSettings

    settings = CompletionSettings(debounce_ms=1, max_debounce_ms=1)
    service = CompletionService(lambda: settings, _stream)
    text, cursor = large_document()
    rows: list[dict[str, float]] = []
    for index in range(requests):
        typed = TYPED[: index % len(TYPED)]
        body = text[:cursor] + typed + text[cursor:]
        offset = cursor + len(typed)
        line = body.count("\n", 0, offset)
        column = offset - (body.rfind("\n", 0, offset) + 1)
        query = CompletionQuery("file:///w/typing.py", "typing.py", "python", body, offset, line, column)
        _ParseCounts.full = _ParseCounts.incremental = 0
        outcome, elapsed_ms, stall_ms = await _watched(service.complete(query))
        if outcome.text is None:
            raise SystemExit(f"no suggestion came back: {outcome.reason}")
        full, incremental = _ParseCounts.full, _ParseCounts.incremental
        _, _, idle_stall_ms = await _watched(asyncio.sleep(elapsed_ms / 1000.0))
        rows.append(
            {
                "server_ms": elapsed_ms - settings.debounce_ms,
                "loop_stall_ms": stall_ms,
                "idle_stall_ms": idle_stall_ms,  # the same wait with no request: this machine's noise
                "full_parses": full,
                "incremental_parses": incremental,
            }
        )
    return rows


def _summary(label: str, rows: list[dict[str, float]]) -> None:
    for key in rows[0]:
        values = [row[key] for row in rows]
        print(
            f"{label:<7}{key:<20}min {min(values):7.1f}  median {statistics.median(values):7.1f}"
            f"  max {max(values):7.1f}"
        )


def main(argv: list[str] | None = None) -> int:
    """Prints the figures of the first request on the document and of the keystrokes after it."""
    parser = argparse.ArgumentParser(prog="python -m bench.syntax_work", description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=30, help="keystrokes, each one request")
    args = parser.parse_args(argv)
    tree_sitter.Parser = _CountingParser  # type: ignore[misc,assignment]
    try:
        rows = asyncio.run(_measure(args.requests))
    finally:
        tree_sitter.Parser = _REAL_PARSER  # type: ignore[misc]
    text, _ = large_document()
    print(f"document: typing.py, {len(text)} characters; suggestion of {SUGGESTION.count(chr(10)) + 1} lines")
    _summary("first", rows[:1])
    _summary("next", rows[1:])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
