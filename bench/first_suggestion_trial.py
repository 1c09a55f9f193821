"""One trial of ``codedraft bench first-suggestion``: open a file, move the cursor near its end,
pause, ask for the first suggestion there, then type a character and ask for the warm one; with the
figures the server's ``codedraft/status`` gave for each."""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types

from bench.lsp import BenchClient, timed_inline_completion
from inference.client import InferenceClient


@dataclass
class Visit:
    """One trial: the first suggestion at a new place, then the warm one after a keystroke there."""

    prefill: bool
    first_ms: float  # daemon's time to first token
    first_round_trip_ms: float
    first_computed: int
    first_prompt: int
    warm_ms: float | None
    warm_computed: int | None
    paused_ms: float  # from the cursor move to the request
    first_local: bool  # the first suggestion sent the local stand-in of a cold full prompt


BLOCK_OPENERS = ("def ", "async def ", "if ", "elif ", "else:", "for ", "while ", "with ", "try:")


def cursor_near_end(text: str) -> tuple[int, int]:
    """The end of the last line that opens a block (``def …:``, ``if …:``) in the first 90 % of the
    file: code, where a suggestion is asked for (not a comment or docstring, where none is)."""
    lines = text.split("\n")
    for index in range(int(len(lines) * 0.9), 0, -1):
        stripped = lines[index].strip()
        if stripped.startswith(BLOCK_OPENERS) and stripped.endswith(":"):
            return index, len(lines[index])
    raise ValueError("no line opens a block")


def _last_completion(client: BenchClient) -> Any:
    return next(
        (s.lastCompletion for s in reversed(client.statuses) if getattr(s, "lastCompletion", None)), None
    )


async def _suggestion(client: BenchClient, uri: str, line: int, character: int) -> tuple[float, Any]:
    """The round trip (ms) of an inline completion, and the ``lastCompletion`` status it produced (None
    when it produced none: suppressed, served from the suggestion cache, or failed; or one without the
    daemon's figures)."""
    known = _last_completion(client)
    round_trip = await timed_inline_completion(
        client, uri, line, character, types.InlineCompletionTriggerKind.Automatic
    )
    # Every status repeats the last completion's figures: wait for new ones, not a repeat.
    deadline = time.perf_counter() + 2.0
    while (last := _last_completion(client)) == known and time.perf_counter() < deadline:
        await asyncio.sleep(0.02)
    # a suggestion whose figures never came (null, see lsp_server/status.py) has nothing to measure
    return round_trip, None if last == known or getattr(last, "promptTokens", None) is None else last


async def _until_idle(daemon: InferenceClient) -> None:
    while (await daemon.stats()).requests_active:
        await asyncio.sleep(0.05)


async def run_trial(
    client: BenchClient,
    path: Path,
    text: str,
    prefill: bool,
    pause_s: float,
    daemon: InferenceClient | None = None,
) -> Visit | None:
    """One trial; with ``daemon``, the pause lasts at least until the daemon is idle (prefill done)."""
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )
    line, character = cursor_near_end(text)
    client.protocol.notify(
        "codedraft/cursor",
        {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}},
    )
    moved = time.perf_counter()
    await asyncio.sleep(pause_s)
    if daemon is not None:
        await asyncio.sleep(0.5)  # the server's prefillDelayMs and the prompt's building
        await _until_idle(daemon)
    paused_ms = (time.perf_counter() - moved) * 1000
    round_trip, first = await _suggestion(client, uri, line, character)
    if first is None:
        print(f"  {path.name}: no suggestion with figures (suppressed or failed)", file=sys.stderr)
        return None
    position = types.Position(line=line, character=character)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=position, end=position), text="z"
                )
            ],
        )
    )
    _, warm = await _suggestion(client, uri, line, character + 1)
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    return Visit(
        prefill,
        float(first.firstTokenMs),
        round_trip,
        int(first.promptTokens - first.reusedTokens),
        int(first.promptTokens),
        None if warm is None else float(warm.firstTokenMs),
        None if warm is None else int(warm.promptTokens - warm.reusedTokens),
        paused_ms,
        bool(getattr(first, "localPrompt", False)),
    )
