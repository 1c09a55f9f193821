"""One ghost-text suggestion from start to end: trigger rules, the typed-through cache, debounce,
retrieval, the daemon's stream, post-processing.

The service knows the daemon only as functions that stream ``CompleteChunk`` messages for a
``CompleteRequest`` and cancel a request, and the index only as a retrieval function, so it is tested
without either. Every request carries the document as its ``session_id``: the daemon, which owns
cancel-previous, stops a document's older completion when a newer one arrives, and the older stream
ends with ``FINISH_REASON_CANCELLED``. The editor's ``$/cancelRequest`` cancels the handler's task
(pygls), which closes the stream and stops decoding.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

from indexer.retrieval.base import RetrievalQuery, Snippet
from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.adaptive_threshold import accept_target
from lsp_server.completion.block_or_line import BlockOrLine
from lsp_server.completion.block_or_line import quiet_reason as shape_reason
from lsp_server.completion.budgets import fit_budgets
from lsp_server.completion.cold_prompts import ColdPrompts, PlannedPrompt
from lsp_server.completion.confidence_gate import (
    Calibration,
    gate_figures,
    load_calibrations,
    operating_point,
)
from lsp_server.completion.confidence_gate import quiet_reason as gate_reason
from lsp_server.completion.debounce import AdaptiveDebounce
from lsp_server.completion.document_trees import DocumentTrees
from lsp_server.completion.postprocess.context import CursorContext
from lsp_server.completion.postprocess.pipeline import postprocess
from lsp_server.completion.request import CompletionQuery, request_at
from lsp_server.completion.suggestion_cache import SuggestionCache
from lsp_server.completion.suggestion_feedback import SuggestionFeedback
from lsp_server.completion.suggestion_stream import CancelRequest, read_suggestion
from lsp_server.completion.trigger import suppression_reason
from lsp_server.config import CompletionSettings
from lsp_server.daemon_supervisor import RequestRejected
from lsp_server.model_room import ModelRoom

StreamComplete = Callable[[pb.CompleteRequest, float], AsyncIterator[pb.CompleteChunk]]
"""Streams the daemon's chunks for a request, with a timeout in seconds. Raises ``TimeoutError`` when
the timeout passes, ``ConnectionError`` when the daemon cannot be reached, and :class:`RequestRejected`
when it refuses the request (both with a message a person can act on); closing the iterator early
cancels the call."""

SUPERSEDED = "superseded by a newer request"


Retrieve = Callable[[RetrievalQuery, int, float, threading.Event], Sequence[Snippet]]
"""Blocking retrieval: query, token budget, time budget (ms), cancel event."""


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
    local: bool = False
    """Whether the daemon was sent the local stand-in of a cold full prompt (see ``cold_prompts``)."""
    answered: bool = False
    """Whether the daemon wrote this suggestion (shown or dropped after), even when its figures never
    came: ``figures`` is then None, never made-up zeros."""


class CompletionService:
    """Turns completion queries into suggestions; one instance per language server."""

    def __init__(
        self,
        settings: Callable[[], CompletionSettings],
        stream: StreamComplete,
        retrieve: Retrieve | None = None,
        room: Callable[[], ModelRoom] = ModelRoom,
        cancel: CancelRequest | None = None,
    ) -> None:
        """``room`` gives what the daemon said of its model (zeros while unknown); prompts are sized
        to fit it and counted with its token estimate (see ``budgets.py``). ``cancel`` stops a
        request whose suggestion is complete before the daemon's stream is (without it the stream
        is closed, and its figures are lost)."""
        self._settings = settings
        self._stream = stream
        self._retrieve = retrieve
        self._room = room
        self._cancel = cancel
        initial = settings()
        self.debounce = AdaptiveDebounce(initial.debounce_ms, initial.max_debounce_ms)
        self.cache = SuggestionCache()
        self.trees = DocumentTrees()
        self.cold = ColdPrompts()
        self._snippets: dict[str, tuple[int, list[Snippet]]] = {}
        self._started = 0
        self._sent: dict[str, int] = {}
        self._calibrations: dict[str, Calibration | None] = {}
        self.feedback = SuggestionFeedback()
        self.block_or_line = BlockOrLine()

    async def complete(self, query: CompletionQuery) -> CompletionOutcome:
        """The suggestion at ``query``'s cursor."""
        started = time.monotonic()
        self._started += 1
        number = self._started
        settings = self._settings()
        self.debounce.min_ms, self.debounce.max_ms = settings.debounce_ms, settings.max_debounce_ms
        # tree-sitter holds the GIL while it parses, so the thread alone would not free the loop: what
        # does is that a keystroke's change is re-parsed incrementally (a millisecond or two).
        context = await asyncio.to_thread(
            self.trees.cursor_context, query.uri, query.text, query.offset, query.language
        )
        reason = suppression_reason(context, settings, deleted=query.deleted)
        if reason is not None:
            return CompletionOutcome(None, reason)
        cached = self.cache.lookup(query.uri, context.prefix, context.suffix)
        if cached is not None:
            return CompletionOutcome(cached, from_cache=True, latency_ms=_ms_since(started))
        return await self._ask_model(query, context, settings, started, number)

    def forget(self, uri: str) -> None:
        """Drops what the service keeps for a closed document."""
        self.cache.forget(uri)
        self.debounce.forget(uri)
        self.trees.forget(uri)
        self._snippets.pop(uri, None)
        self._sent.pop(uri, None)
        self.cold.forget(uri)

    async def _ask_model(
        self,
        query: CompletionQuery,
        context: CursorContext,
        settings: CompletionSettings,
        started: float,
        number: int,
    ) -> CompletionOutcome:
        await asyncio.sleep(self.debounce.delay_ms(query.uri) / 1000.0)
        prompts, snippets = await self._prompts_for(query, settings)
        prompt = prompts[0]
        request = self.block_or_line.request(prompt.request, context, settings.confidence, self._room().model)
        # Debounce waits and retrieval times differ, so a document's requests can get here out of order;
        # an older one must not reach the daemon after a newer one, which it would then supersede.
        if self._sent.get(query.uri, 0) > number:
            return CompletionOutcome(None, SUPERSEDED, latency_ms=_ms_since(started))
        self._sent[query.uri] = number
        streaming = time.monotonic()
        try:
            text, figures, superseded, finishing = await read_suggestion(
                self._stream(request, settings.timeout_ms / 1000.0), context, self._cancel
            )
        except TimeoutError:
            return CompletionOutcome(
                None, "timed out", latency_ms=_ms_since(started), snippets=snippets, local=prompt.local
            )
        except ConnectionError as error:
            return CompletionOutcome(None, f"daemon unavailable: {error}", latency_ms=_ms_since(started))
        except RequestRejected as error:
            return CompletionOutcome(
                None, f"the daemon refused the request: {error}", latency_ms=_ms_since(started)
            )
        daemon_ms = _ms_since(streaming)
        if superseded:
            return CompletionOutcome(
                None, SUPERSEDED, False, _ms_since(started), daemon_ms, figures, snippets, prompt.local
            )
        postprocessing = asyncio.to_thread(postprocess, context, text)
        if finishing is None:
            verdict = await postprocessing
        else:  # the daemon's last chunk arrives while the suggestion is post-processed
            try:
                verdict, (figures, finished) = await asyncio.gather(postprocessing, finishing)
            finally:
                finishing.cancel()
            daemon_ms = max(daemon_ms, (finished - streaming) * 1000.0)
        if figures is not None and figures.generated_tokens > 0:  # the daemon computed the whole prompt
            self.cold.answered(query.uri, prompt, figures, self._room().estimate)
        latency = _ms_since(started)
        if verdict.text is None:
            reason = f"filtered ({verdict.dropped_by})" if text.strip() else "the model suggested nothing"
            return CompletionOutcome(
                None, reason, False, latency, daemon_ms, figures, snippets, prompt.local, answered=True
            )
        if (misfit := shape_reason(context, verdict.text)) is not None:
            return CompletionOutcome(
                None, misfit, False, latency, daemon_ms, figures, snippets, prompt.local, answered=True
            )
        if (doubt := self._gate(settings, figures)) is not None:
            return CompletionOutcome(
                None, doubt, False, latency, daemon_ms, figures, snippets, prompt.local, answered=True
            )
        shown = self.block_or_line.kept(
            context, verdict.text, figures, settings.confidence, self._room().model
        )
        self.cache.remember(query.uri, context.prefix, context.suffix, shown)
        return CompletionOutcome(
            shown, None, False, latency, daemon_ms, figures, snippets, prompt.local, answered=True
        )

    def _gate(self, settings: CompletionSettings, figures: pb.RequestFigures | None) -> str | None:
        """Why the confidence gate keeps this suggestion back (None: show it, also when the daemon
        sent no figures to judge by)."""
        model = self._room().model
        if model not in self._calibrations:
            self._calibrations[model] = load_calibrations().get(model)
        calibration = self._calibrations[model]
        point = self.feedback.adapt(  # the user's own accepts move the calibrated point
            model,
            operating_point(settings.confidence, calibration),
            accept_target(settings.confidence, calibration),
        )
        return gate_reason(point, gate_figures(figures))

    async def prefill_prompts(self, query: CompletionQuery) -> list[PlannedPrompt]:
        """The prompts to compute ahead of a completion at ``query``'s cursor, in order: the request a
        completion there would send now (same snippets, budgets and window, so the daemon's prompt is
        byte-identical), then the full prompt when that one is its local stand-in. None where no
        completion would ask the daemon (suggestions off or suppressed there, or already cached):
        an empty list."""
        settings = self._settings()
        context = await asyncio.to_thread(
            self.trees.cursor_context, query.uri, query.text, query.offset, query.language
        )
        if suppression_reason(context, settings, deleted=False) is not None:
            return []
        if self.cache.lookup(query.uri, context.prefix, context.suffix) is not None:
            return []
        prompts, _ = await self._prompts_for(query, settings)
        return prompts

    def prefilled(self, uri: str, prompt: PlannedPrompt, reply: pb.PrefillResponse) -> None:
        """The daemon has computed ``prompt`` for a prefill: it answers completions now."""
        if reply.prefilled:
            self.cold.computed(uri, prompt)

    async def _prompts_for(
        self, query: CompletionQuery, settings: CompletionSettings
    ) -> tuple[list[PlannedPrompt], list[Snippet]]:
        """The prompt a completion at ``query``'s cursor sends, then the full prompt when that one is
        its local stand-in (``cold_prompts``); and the snippets the first carries."""
        budgets = fit_budgets(settings, self._room())
        snippets = await self._snippets_for(query, budgets.context)
        full = request_at(query, settings, budgets, snippets)
        plan = self.cold.plan(query.uri, full, budgets, settings.cold_prompt_ms)
        if isinstance(plan, PlannedPrompt):
            return [plan], snippets
        local = PlannedPrompt(request_at(query, settings, plan, []), None)
        return [local, PlannedPrompt.full(full)], []

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


def _ms_since(started: float) -> float:
    return (time.monotonic() - started) * 1000.0
