"""One ghost-text suggestion from start to end: trigger rules, the typed-through cache, debounce,
retrieval, the daemon's stream, post-processing.

The service knows the daemon only as a function that streams ``CompleteChunk`` messages for a
``CompleteRequest`` and the index only as a retrieval function, so it is tested without either.
A newer request for the same document cancels the older one, and so does the editor's
``$/cancelRequest`` (pygls cancels the handler's task): the cancellation reaches the daemon call,
which stops decoding.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

from indexer.retrieval.base import RetrievalQuery, Snippet
from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.budgets import fit_budgets
from lsp_server.completion.debounce import AdaptiveDebounce
from lsp_server.completion.document_trees import DocumentTrees
from lsp_server.completion.postprocess.context import CursorContext
from lsp_server.completion.postprocess.pipeline import postprocess
from lsp_server.completion.postprocess.stop_at_block_end import stop_at_block_end
from lsp_server.completion.suggestion_cache import SuggestionCache
from lsp_server.completion.trigger import suppression_reason
from lsp_server.completion.window import cursor_window
from lsp_server.config import CompletionSettings

StreamComplete = Callable[[pb.CompleteRequest, float], AsyncIterator[pb.CompleteChunk]]
"""Streams the daemon's chunks for a request, with a timeout in seconds. Raises ``TimeoutError`` when
the timeout passes, ``ConnectionError`` when the daemon cannot be reached, and :class:`RequestRejected`
when it refuses the request (both with a message a person can act on); closing the iterator early
cancels the call."""


class RequestRejected(Exception):
    """The daemon refused or failed the request itself (bad argument, full KV pool or queue)."""


Retrieve = Callable[[RetrievalQuery, int, float, threading.Event], Sequence[Snippet]]
"""Blocking retrieval: query, token budget, time budget (ms), cancel event."""

_SPECULATION = {
    "auto": pb.SPECULATION_MODE_AUTO,
    "off": pb.SPECULATION_MODE_OFF,
    "ngram": pb.SPECULATION_MODE_NGRAM,
    "draft": pb.SPECULATION_MODE_DRAFT,
}


@dataclass(frozen=True)
class CompletionQuery:
    """A cursor in an open document. ``line`` is 0-based and ``column`` in UTF-16 units (LSP)."""

    uri: str
    path: str
    language: str | None
    text: str
    offset: int
    line: int
    column: int
    deleted: bool = False


@dataclass
class CompletionOutcome:
    """The suggestion, or why there is none; with the daemon's figures when it was asked."""

    text: str | None
    reason: str | None = None
    from_cache: bool = False
    latency_ms: float = 0.0
    daemon_ms: float = 0.0
    """Time spent waiting on the daemon's stream (the rest of ``latency_ms`` is the server's own)."""
    figures: pb.RequestFigures | None = None
    snippets: list[Snippet] = field(default_factory=list)


class CompletionService:
    """Turns completion queries into suggestions; one instance per language server."""

    def __init__(
        self,
        settings: Callable[[], CompletionSettings],
        stream: StreamComplete,
        retrieve: Retrieve | None = None,
        context_length: Callable[[], int] = lambda: 0,
    ) -> None:
        """``context_length`` gives the daemon's model context (0 while unknown); prompts are sized
        to fit it (see ``budgets.py``)."""
        self._settings = settings
        self._stream = stream
        self._retrieve = retrieve
        self._context_length = context_length
        initial = settings()
        self.debounce = AdaptiveDebounce(initial.debounce_ms, initial.max_debounce_ms)
        self.cache = SuggestionCache()
        self.trees = DocumentTrees()
        self._inflight: dict[str, asyncio.Task[CompletionOutcome]] = {}
        self._snippets: dict[str, tuple[int, list[Snippet]]] = {}

    async def complete(self, query: CompletionQuery) -> CompletionOutcome:
        """The suggestion at ``query``'s cursor; supersedes the document's previous request."""
        started = time.monotonic()
        settings = self._settings()
        self.debounce.min_ms, self.debounce.max_ms = settings.debounce_ms, settings.max_debounce_ms
        previous = self._inflight.pop(query.uri, None)
        if previous is not None:
            previous.cancel()  # whatever this request turns out to be, the older one is stale
        # On the loop, before the request is registered as the document's latest: re-parsing a
        # keystroke's change from the document's previous tree takes a millisecond or two.
        context = self.trees.cursor_context(query.uri, query.text, query.offset, query.language)
        reason = suppression_reason(context, settings, deleted=query.deleted)
        if reason is not None:
            return CompletionOutcome(None, reason)
        cached = self.cache.lookup(query.uri, context.prefix, context.suffix)
        if cached is not None:
            return CompletionOutcome(cached, from_cache=True, latency_ms=_ms_since(started))
        task = asyncio.ensure_future(self._ask_model(query, context, settings, started))
        self._inflight[query.uri] = task
        try:
            return await task
        except asyncio.CancelledError:
            if task.cancelled() and not _current_task_cancelling():
                return CompletionOutcome(None, "superseded by a newer request")
            raise
        finally:
            if self._inflight.get(query.uri) is task:
                del self._inflight[query.uri]

    def forget(self, uri: str) -> None:
        """Drops what the service keeps for a closed document."""
        self.cache.forget(uri)
        self.debounce.forget(uri)
        self.trees.forget(uri)
        self._snippets.pop(uri, None)
        task = self._inflight.pop(uri, None)
        if task is not None:
            task.cancel()

    async def _ask_model(
        self, query: CompletionQuery, context: CursorContext, settings: CompletionSettings, started: float
    ) -> CompletionOutcome:
        await asyncio.sleep(self.debounce.delay_ms(query.uri) / 1000.0)
        budgets = fit_budgets(settings, self._context_length())
        snippets = await self._snippets_for(query, budgets.context)
        window = cursor_window(query.text, query.offset, budgets.prefix, budgets.suffix)
        request = pb.CompleteRequest(
            session_id=query.uri,
            prefix=_valid_utf8(window.prefix),
            suffix=_valid_utf8(window.suffix),
            path=query.path,
            language=query.language or "",
            snippets=[
                pb.ContextSnippet(
                    path=s.path,
                    text=_valid_utf8(s.text),
                    score=s.score,
                    source="+".join(s.sources),
                    start_line=s.start_line + 1,
                )
                for s in snippets
            ],
            sampling=pb.SamplingParams(temperature=settings.temperature, max_tokens=settings.max_tokens),
            speculation=_SPECULATION.get(settings.speculation, pb.SPECULATION_MODE_AUTO),
        )
        streaming = time.monotonic()
        try:
            text, figures = await self._stream_text(request, context, settings.timeout_ms / 1000.0)
        except TimeoutError:
            return CompletionOutcome(None, "timed out", latency_ms=_ms_since(started), snippets=snippets)
        except ConnectionError as error:
            return CompletionOutcome(None, f"daemon unavailable: {error}", latency_ms=_ms_since(started))
        except RequestRejected as error:
            return CompletionOutcome(
                None, f"the daemon refused the request: {error}", latency_ms=_ms_since(started)
            )
        daemon_ms = _ms_since(streaming)
        verdict = await asyncio.to_thread(postprocess, context, text)
        latency = _ms_since(started)
        if verdict.text is None:
            reason = f"filtered ({verdict.dropped_by})" if text.strip() else "the model suggested nothing"
            return CompletionOutcome(None, reason, False, latency, daemon_ms, figures, snippets)
        self.cache.remember(query.uri, context.prefix, context.suffix, verdict.text)
        return CompletionOutcome(verdict.text, None, False, latency, daemon_ms, figures, snippets)

    async def _stream_text(
        self, request: pb.CompleteRequest, context: CursorContext, timeout_s: float
    ) -> tuple[str, pb.RequestFigures | None]:
        """The streamed text; stops reading (which cancels the call) once the suggestion's block ended."""
        text = ""
        figures: pb.RequestFigures | None = None
        stream = self._stream(request, timeout_s)
        try:
            async for chunk in stream:
                text += chunk.text_delta
                if chunk.done:
                    figures = chunk.figures
                    break
                if text.count("\n") >= 2 and stop_at_block_end(context, text) != text:
                    break
        finally:
            await stream.aclose()  # type: ignore[attr-defined]
        return text, figures

    async def _snippets_for(self, query: CompletionQuery, budget_tokens: int) -> list[Snippet]:
        """Retrieval results, kept while the cursor stays on one line so the prompt stays cache-stable."""
        if self._retrieve is None or budget_tokens == 0:
            return []
        kept = self._snippets.get(query.uri)
        if kept is not None and kept[0] == query.line:
            return kept[1]
        cancel = threading.Event()
        retrieval = RetrievalQuery(path=query.path, text=query.text, line=query.line, column=query.column)
        try:
            found = await asyncio.to_thread(self._retrieve, retrieval, budget_tokens, 50.0, cancel)
        except asyncio.CancelledError:
            cancel.set()
            raise
        snippets = list(found)
        self._snippets[query.uri] = (query.line, snippets)
        return snippets


def _valid_utf8(text: str) -> str:
    """``text`` with lone surrogates (which JSON can carry but UTF-8 cannot) replaced."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _ms_since(started: float) -> float:
    return (time.monotonic() - started) * 1000.0


def _current_task_cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
