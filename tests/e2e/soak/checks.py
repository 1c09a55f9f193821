"""The soak's checks of the server and the daemon, from the outside: the documents' text, the daemon
serving again and idle, resident memory, and the index against a fresh one."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from lsprotocol import types

from inference.client import InferenceClient
from tests.e2e.soak.editor_model import OpenDocument
from tests.e2e.soak.observations import (
    daemon_pid,
    fresh_index_rows,
    index_difference,
    index_rows,
    server_index_path,
)
from tests.e2e.soak.session import LspSession

COMPLETION_TIMEOUT_S = 5.0
"""The server's completion and next-edit timeouts (its defaults, ``timeoutMs`` 5000)."""
IDLE_TIMEOUT_S = 30.0
"""How long the daemon may take to end its last requests once the editor is idle."""
RESTART_TIMEOUT_S = 120.0
"""How long the server may take to serve suggestions again after the daemon was killed."""
INDEX_TIMEOUT_S = 30.0
"""How long the server's index may take to catch up with the files once every document is closed."""
GROWTH_KIB = {"server": 8 * 1024, "daemon": 48 * 1024}
"""How much a process's resident memory may grow between the first sample after warming up and the
last. The server grew 1.5 MiB over a 5,000-edit session once pygls stopped keeping a future per
notification (14 MiB before); the daemon's moves by 10-20 MiB with the prompts it holds."""

Samples = list[tuple[int, int, int]]
"""Resident memory samples: (step, pid, KiB)."""


def inline_at(document: OpenDocument, line: int, character: int) -> types.InlineCompletionParams:
    """``textDocument/inlineCompletion`` params for ``document`` at (line, UTF-16 column)."""
    return types.InlineCompletionParams(
        text_document=types.TextDocumentIdentifier(uri=document.uri),
        position=types.Position(line=line, character=character),
        context=types.InlineCompletionContext(trigger_kind=types.InlineCompletionTriggerKind.Automatic),
    )


def check_documents(session: LspSession, documents: dict[str, OpenDocument]) -> None:
    """The server holds exactly the editor's open documents, with the editor's text."""
    held = {entry["uri"]: entry["text"] for entry in session.command("codedraft.documents")}
    mine = {document.uri: document.text for document in documents.values()}
    assert sorted(held) == sorted(mine), "the server's open documents are not the editor's"
    for uri, text in mine.items():
        assert held[uri] == text, f"the server's text of {uri} differs from the editor's"


def wait_for_suggestion(session: LspSession, document: OpenDocument, line: int, character: int) -> None:
    """Asks for suggestions at (line, character) until one comes from a live daemon: the server has a
    daemon again. ``document`` must be new to the server (an answer it has cached proves nothing)."""
    deadline = time.monotonic() + RESTART_TIMEOUT_S
    while True:
        params = inline_at(document, line, character)
        answer = session.request(types.TEXT_DOCUMENT_INLINE_COMPLETION, params, COMPLETION_TIMEOUT_S)
        if answer is not None and answer.items and daemon_pid(session.server_pid) is not None:
            return
        assert time.monotonic() < deadline, (
            f"no suggestion {RESTART_TIMEOUT_S:g} s after the daemon was killed"
        )
        time.sleep(0.5)


def check_daemon_idle(session: LspSession, address: str) -> Any:
    """Once the editor is idle the daemon runs and queues no request and holds no KV block (cached
    prefixes may stay); returns its stats."""
    deadline = time.monotonic() + IDLE_TIMEOUT_S
    while True:
        stats = session.run(_stats(address), 5.0, "GetStats")
        if stats.requests_active == 0 and stats.queue_depth == 0 and stats.kv_blocks_used == 0:
            return stats
        assert time.monotonic() < deadline, f"the idle daemon still holds work or KV blocks: {stats}"
        time.sleep(0.2)


def check_memory(process: str, samples: Samples) -> None:
    """The last process's resident memory grew by at most its :data:`GROWTH_KIB` from its second sample
    (the first may precede warming up) to its last."""
    last_pid = samples[-1][1] if samples else None
    mine = [sample for sample in samples if sample[1] == last_pid]
    if len(mine) < 3:
        return  # this process has not lived long enough to compare early and late samples
    (first_step, _, early), (last_step, _, late) = mine[1], mine[-1]
    assert late - early <= GROWTH_KIB[process], (
        f"the {process}'s resident memory grew by {(late - early) // 1024} MiB "
        f"({early // 1024} -> {late // 1024}) over steps {first_step}-{last_step}: {samples}"
    )


def check_index(session: LspSession, workspace: Path, cache_home: Path) -> None:
    """With every document closed, the server's index catches up with the files: it holds what a
    fresh index of them holds (files, symbols, chunks)."""
    db_path = server_index_path(cache_home)
    deadline = time.monotonic() + INDEX_TIMEOUT_S
    while True:
        session.sync()
        difference = index_difference(index_rows(db_path), fresh_index_rows(workspace))
        if not difference:
            return
        assert time.monotonic() < deadline, f"the server's index differs from a fresh one:\n{difference}"
        time.sleep(1.0)


async def _stats(address: str) -> Any:
    async with InferenceClient(address) as client:
        return await client.stats(timeout=5.0)
