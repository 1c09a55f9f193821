"""Replays the cases through a real ``codedraft lsp`` as an editor would: open the file as it was
before the commit, type the user's edit as a few incremental ``didChange``, ask
``textDocument/copilotInlineEdit`` at the end of it, and, for a rename, accept each edit offered
(apply it, ``didChange``, ``codedraft.acceptInlineEdit``) and ask again until the server has none.

Each case gets a folder of its own in the workspace, so that no two cases' files meet in the index;
the file is opened once the index holds it, as a user's file already is when they open it (else the
first predictions on it would find no snippets, and the next ones new snippets and a cold prompt).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from bench.lsp import BenchClient
from bench.next_edit.cases import Case, apply_blocks, user_rename
from bench.next_edit.keystrokes import (
    Change,
    apply_changes,
    apply_edits,
    changed_span,
    keystrokes,
    offset_at,
    position_at,
)
from bench.next_edit.scoring import nearest_block
from indexer.schema import default_db_path
from inference.client import InferenceClient

INLINE_EDIT = "textDocument/copilotInlineEdit"
DID_SHOW = "textDocument/didShowInlineEdit"
ACCEPT = "codedraft.acceptInlineEdit"
REJECT = "codedraft.rejectInlineEdit"
DAEMON_COUNTS = {
    "modelCalls": "requests_total",
    "promptTokens": "prompt_tokens",
    "computedTokens": "computed_tokens",
    "generatedTokens": "generated_tokens",
}
"""The daemon's running totals a request's figures are the growth of (only the bench uses the daemon)."""
KEYSTROKE_GAP_S = 0.03
"""Between the chunks of one typed edit: one burst of typing for the server's edit history."""
INDEXED_TIMEOUT_S = 30.0
"""How long a case's new file may take to reach the index (the watcher's debounce and a parse)."""


@dataclass
class Step:
    """One request and what it is scored against (texts are whole files; see ``scoring``)."""

    case: str
    kind: str
    number: int  # 1 for the first request on the file (cold), 2... after it (warm)
    user_before: str
    current: str
    predicted: str
    truth: str
    nearest: str
    latency_ms: float
    edits: int
    figures: dict[str, Any] = field(default_factory=dict)


@dataclass
class Chain:
    """A rename case: the file after the user's first rename, after the edits accepted, the truth."""

    case: str
    old: str  # the renamed identifier
    current: str
    final: str
    truth: str
    accepted: int
    other_files: int  # edits offered in another document (the workspace holds none of them)
    latencies_ms: list[float]  # of the requests after each accepted edit (warm)


def server_environment(workspace: Path) -> dict[str, str]:
    """The language server's environment: its cache (the index among it) inside ``workspace``."""
    return {**os.environ, "XDG_CACHE_HOME": str(workspace / ".cache")}


def plain(value: Any) -> Any:
    """An answer or notification as plain dicts and lists (pygls hands unknown methods' results over
    as named tuples)."""
    if hasattr(value, "_asdict"):
        value = value._asdict()
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def _change_of(edit: dict[str, Any]) -> Change:
    start, end = edit["range"]["start"], edit["range"]["end"]
    return Change((start["line"], start["character"]), (end["line"], end["character"]), edit["text"])


class Replayer:
    """Drives one language server through the cases, one document at a time."""

    def __init__(
        self,
        client: BenchClient,
        workspace: Path,
        max_steps: int,
        max_chain: int,
        daemon: InferenceClient | None = None,
    ) -> None:
        self.client = client
        self.daemon = daemon
        self.workspace = workspace
        self.max_steps = max_steps
        self.max_chain = max_chain
        self.version = 0

    def _send(self, uri: str, changes: list[Change]) -> None:
        self.version += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.version),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(
                            start=types.Position(line=c.start[0], character=c.start[1]),
                            end=types.Position(line=c.end[0], character=c.end[1]),
                        ),
                        text=c.text,
                    )
                    for c in changes
                ],
            )
        )

    async def _type(self, uri: str, old: str, new: str) -> str:
        """Types ``old`` -> ``new``; returns the text the server now holds."""
        text = old
        for change in keystrokes(old, new):
            await asyncio.sleep(KEYSTROKE_GAP_S)
            self._send(uri, [change])
            text = apply_changes(text, [change])
        assert text == new
        return text

    async def _daemon_counts(self) -> dict[str, int]:
        if self.daemon is None:
            return {}
        stats = await self.daemon.stats()
        return {name: int(getattr(stats, field)) for name, field in DAEMON_COUNTS.items()}

    async def _ask(
        self, uri: str, text: str, cursor: int
    ) -> tuple[list[dict[str, Any]], float, dict[str, Any]]:
        """The edits offered at character ``cursor``, the round trip (ms), and figures: the daemon's
        work for the request (``modelCalls``, ``promptTokens``, ``computedTokens``,
        ``generatedTokens``), why the server stayed quiet (``quiet``), or the request's ``error``."""
        line, character = position_at(text, cursor)
        params = {
            "textDocument": {"uri": uri, "version": self.version},
            "position": {"line": line, "character": character},
            "context": {"triggerKind": 2},
        }
        counts = await self._daemon_counts()
        started = time.perf_counter()
        try:
            answer = plain(await self.client.protocol.send_request_async(INLINE_EDIT, params))
        except JsonRpcException as error:  # counted as an error and as no answer, not fatal
            return [], (time.perf_counter() - started) * 1000, {"error": str(error)}
        latency_ms = (time.perf_counter() - started) * 1000
        edits = list((answer or {}).get("edits") or [])
        if edits:
            self.client.protocol.notify(DID_SHOW, {"item": {"command": edits[0].get("command")}})
        await asyncio.sleep(0.02)  # the status notification that follows a quiet answer
        after = await self._daemon_counts()
        figures: dict[str, Any] = {name: after[name] - counts[name] for name in counts}
        # The status is sent only when it changes, so a repeated reason comes as no notification:
        # the latest status holds the reason of a quiet answer either way.
        latest = plain(self.client.statuses[-1]) if self.client.statuses else {}
        if not edits and isinstance(latest, dict) and latest.get("suppressed"):
            figures["quiet"] = latest["suppressed"]
        return edits, latency_ms, figures

    async def _indexed(self, relative: str) -> None:
        """Waits until the workspace index holds ``relative`` (it is the server's, read here only)."""
        database = default_db_path(self.workspace, server_environment(self.workspace))
        deadline = time.perf_counter() + INDEXED_TIMEOUT_S
        while time.perf_counter() < deadline:
            try:
                with sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True, timeout=5) as connection:
                    if connection.execute("SELECT 1 FROM files WHERE path = ?", (relative,)).fetchone():
                        return
            except sqlite3.Error:
                pass  # not created yet, or busy: asked again
            await asyncio.sleep(0.05)
        raise TimeoutError(f"{relative} was not indexed within {INDEXED_TIMEOUT_S:.0f} s")

    async def _open(self, case: Case) -> str:
        path = self.workspace / case.name / case.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(case.before, encoding="utf-8")
        await self._indexed(f"{case.name}/{case.path}")
        uri = path.as_uri()
        self.version = 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="python", version=1, text=case.before
                )
            )
        )
        return uri

    def _close(self, uri: str, case: Case) -> None:
        """Closes the document and deletes the case's folder: no later case meets its file."""
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
        )
        shutil.rmtree(self.workspace / case.name, ignore_errors=True)

    def _step(
        self, uri: str, case: Case, number: int, user_before: str, current: str, cursor: int, asked: Any
    ) -> Step:
        """The request's step; the prediction is every edit of the answer in this document."""
        edits, latency_ms, status = asked
        here = [_change_of(e) for e in edits if e.get("textDocument", {}).get("uri", uri) == uri]
        predicted = apply_edits(current, here) if here else current
        cursor_line = position_at(current, cursor)[0]
        truth = case.after
        return Step(
            case.name,
            case.kind,
            number,
            user_before,
            current,
            predicted,
            truth,
            nearest_block(current, truth, cursor_line),
            latency_ms,
            len(edits),
            status,
        )

    async def replay_blocks(self, case: Case) -> list[Step]:
        """A multi or silence case: the user types the blocks one after the other (at most
        ``max_steps``), one request after each; a prediction shown is dismissed
        (``codedraft.rejectInlineEdit``) before the next block is typed."""
        uri = await self._open(case)
        steps = []
        text = case.before
        shown: list[dict[str, Any]] = []
        for number in range(1, min(len(case.blocks), self.max_steps) + 1):
            if shown:  # the user dismisses the prediction and types the next change
                arguments = (shown[0].get("command") or {}).get("arguments")
                await self.client.workspace_execute_command_async(
                    types.ExecuteCommandParams(command=REJECT, arguments=arguments)
                )
            new = apply_blocks(case.before, case.blocks[:number])
            await self._type(uri, text, new)
            start, _, inserted = changed_span(text, new)
            cursor = start + len(inserted)
            asked = await self._ask(uri, new, cursor)
            shown = asked[0]
            steps.append(self._step(uri, case, number, text, new, cursor, asked))
            text = new
        self._close(uri, case)
        return steps

    async def replay_rename(self, case: Case) -> tuple[Step, Chain]:
        """A rename case: the user renames the first occurrence, then accepts each edit offered in
        the file (at most ``max_chain``), asking again after each."""
        assert case.rename is not None
        uri = await self._open(case)
        offset, current = user_rename(case)
        await self._type(uri, case.before, current)
        cursor = offset + len(case.rename[1])
        asked = await self._ask(uri, current, cursor)
        first = self._step(uri, case, 1, case.before, current, cursor, asked)
        chain = Chain(case.name, case.rename[0], current, current, case.after, 0, 0, [])
        edits = asked[0]
        while edits and chain.accepted < self.max_chain:
            edit = edits[0]
            if edit.get("textDocument", {}).get("uri", uri) != uri:
                chain.other_files += 1
                break
            change = _change_of(edit)
            cursor = offset_at(chain.final, change.start) + len(change.text)
            chain.final = apply_edits(chain.final, [change])
            self._send(uri, [change])
            arguments = (edit.get("command") or {}).get("arguments")
            await self.client.workspace_execute_command_async(
                types.ExecuteCommandParams(command=ACCEPT, arguments=arguments)
            )
            chain.accepted += 1
            edits, latency_ms, _ = await self._ask(uri, chain.final, cursor)
            chain.latencies_ms.append(latency_ms)
        self._close(uri, case)
        return first, chain
