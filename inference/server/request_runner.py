"""One request from its proto message to its chunks, for every face (gRPC and HTTP alike).

The runner owns what the daemon is serving now: the models (once loaded; `ServedModels` routes each
task to one), the live requests (the one owner of cancel-previous), the counters (the daemon's, and
each model's), and shutting down. A face translates its wire into the
proto request, iterates :meth:`RequestRunner.complete` / :meth:`~RequestRunner.generate`, and
translates a :class:`~inference.call_status.CallFailed` into its own status: raised before the
first chunk when the call is refused, after the last chunk when the call was stopped or failed.
:meth:`RequestRunner.predict_edit` runs the same path and answers with the whole reply, parsed.

A stream that the engine finished yields a last chunk (done, finish reason, figures). Leaving the
iteration early (the client cancelled, disconnected or ran past its deadline) aborts the engine
request, which frees the KV blocks within one step.

Prefill runs the same path as Complete, on the prompt Complete would build, as an engine request of
kind PREFILL that samples one token nobody sees (the prompt's KV is what it is for): the engine runs
it last and preempts it first, and a later Complete of the session supersedes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import replace
from typing import Any

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.protocol import BackendStats
from inference.backends.served_model import ServedModel
from inference.backends.served_models import (
    COMPLETE,
    GENERATE_CHAT,
    GENERATE_PROMPT,
    PREDICT_EDIT,
    ServedModels,
)
from inference.call_status import CallFailed, Failure
from inference.config import RequestKind
from inference.engine.errors import EngineError
from inference.engine.sequence import FinishReason, Request
from inference.server.call_outcome import CallOutcome, final_status
from inference.server.counters import FINISH_REASONS, DaemonCounters, request_figures
from inference.server.live_requests import LiveRequest, LiveRequests, request_id_for
from inference.server.prepare import PreparedRequest, prepare_complete, prepare_generate, prepare_prefill
from inference.server.prepare_next_edit import prepare_predict_edit
from inference.server.validation import RequestError

Prepare = Callable[[Any, ServedModel], PreparedRequest]


class RequestRunner:
    """Runs the daemon's requests; `attach` makes it serve once the models have loaded."""

    def __init__(self) -> None:
        self.models: ServedModels | None = None
        self.counters = DaemonCounters()
        self.model_counters: dict[str, DaemonCounters] = {}
        self.live = LiveRequests()
        self.shutting_down = False
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def served(self) -> ServedModel | None:
        """The completion model (the only one, unless the daemon serves a chat model beside it)."""
        return self.models.completion if self.models is not None else None

    def attach(self, served: ServedModel | ServedModels) -> None:
        self.models = served if isinstance(served, ServedModels) else ServedModels(served)
        self.model_counters = {role: DaemonCounters(self.counters) for role, _ in self.models.roles()}

    def ready(self) -> ServedModels:
        """The served models; CallFailed(UNAVAILABLE) while they load or the daemon shuts down."""
        if self.shutting_down:
            raise CallFailed(Failure.UNAVAILABLE, "the daemon is shutting down; retry with a new one")
        if self.models is None:
            raise CallFailed(Failure.UNAVAILABLE, "the model is still loading; retry in a moment")
        return self.models

    def complete(self, request: pb.CompleteRequest) -> AsyncGenerator[pb.CompleteChunk, None]:
        """The chunks of a Complete request."""
        return self._run(request, prepare_complete, COMPLETE)

    def generate(self, request: pb.GenerateRequest) -> AsyncGenerator[pb.GenerateChunk, None]:
        """The chunks of a Generate request."""
        task = GENERATE_CHAT if request.WhichOneof("input") == "chat" else GENERATE_PROMPT
        return self._run(request, prepare_generate, task)

    async def prefill(self, request: pb.CompleteRequest) -> pb.PrefillResponse:
        """Computes the prompt a Complete would send now, ahead of it (or says why it is skipped)."""
        served = self.ready().for_task(COMPLETE)
        if not served.prefills:
            return pb.PrefillResponse(
                request_id=request.request_id,
                skipped="the daemon serves a remote engine, which could not pre-empt a prefill",
            )
        last: Any = None
        async for chunk in self._run(request, prepare_prefill, COMPLETE):
            last = chunk
        return pb.PrefillResponse(request_id=last.request_id, prefilled=True, figures=last.figures)

    async def predict_edit(self, request: pb.PredictEditRequest) -> pb.PredictEditReply:
        """The region as the model rewrites it: run as a Complete runs (cancel-previous in the
        session's next-edit lane, Cancel, deadlines, drain, figures), its text collected and parsed
        with the served format. Raises CallFailed as `complete` does."""
        served = self.ready().for_task(PREDICT_EDIT)
        try:
            edit = prepare_predict_edit(request, served)
        except RequestError as error:
            raise CallFailed(Failure.INVALID_ARGUMENT, str(error)) from None
        pieces: list[str] = []
        last: Any = None
        prepared = self._run(request, lambda _request, _served: edit.prepared, PREDICT_EDIT)
        async with contextlib.aclosing(prepared) as chunks:
            async for chunk in chunks:
                pieces.append(chunk.text_delta)
                last = chunk
        return edit.reply(last.request_id, "".join(pieces), last.finish_reason, last.figures)

    def cancel(self, request_id: str) -> bool:
        """Stops a live request (its stream ends CANCELLED); False when none has that id."""
        live = self.live.stop(request_id, Failure.CANCELLED, "cancelled by a Cancel call")
        if live is None:
            return False
        self._abort(live)
        return True

    def _abort(self, live: LiveRequest) -> None:
        """Stops `live` in the engine of the model that runs it."""
        if self.models is not None:
            self.models.by_role(live.model).backend.abort(live.request_id)

    def stats(self) -> pb.Stats:
        """GetStats: the daemon's totals and its engines' figures summed; with two models, each
        model's own figures too."""
        if self.models is None:
            return self.counters.to_proto(len(self.live), None)
        backends = {role: served.backend.stats() for role, served in self.models.roles()}
        stats = self.counters.to_proto(len(self.live), BackendStats.total(list(backends.values())))
        if self.models.chat is not None:
            for role, served in self.models.roles():
                active = sum(1 for live in self.live.all() if live.model == role)
                figures = self.model_counters[role].to_proto(active, backends[role])
                stats.models.add(served_by=role, model_name=served.info.model.name, stats=figures)
        return stats

    async def drain(self, grace_seconds: float, reason: str = "shutdown") -> int:
        """Refuse new calls, give live ones `grace_seconds` to finish, then stop the rest
        (UNAVAILABLE). Returns how many calls were stopped."""
        self.shutting_down = True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), grace_seconds)
        stopped = 0
        for live in self.live.all():
            self.live.stop(
                live.request_id,
                Failure.UNAVAILABLE,
                f"the daemon is shutting down ({reason}); the request was stopped, retry with a new daemon",
            )
            self._abort(live)
            stopped += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), 10.0)
        return stopped

    async def close(self) -> None:
        """Release the backends (their engine threads, or pooled connections) once no call is left."""
        if self.models is not None:
            for _, served in self.models.roles():
                await served.backend.close()

    async def _run(self, request: Any, prepare: Prepare, task: str) -> AsyncGenerator[Any, None]:
        arrival = time.perf_counter()
        models = self.ready()
        role = models.role_for(task)
        served = models.by_role(role)
        try:
            prepared = prepare(request, served)
        except RequestError as error:
            raise CallFailed(Failure.INVALID_ARGUMENT, str(error)) from None
        async with contextlib.aclosing(self._serve(served, role, request, arrival, prepared)) as chunks:
            async for chunk in chunks:
                yield chunk

    async def _serve(
        self, served: ServedModel, role: str, request: Any, arrival: float, prepared: PreparedRequest
    ) -> AsyncGenerator[Any, None]:
        """Registers the call, fits its prompt, streams the engine's outputs, and raises how it failed
        after its last chunk."""
        request_id = request_id_for(request.request_id)
        if request_id in self.live:
            raise CallFailed(Failure.INVALID_ARGUMENT, f"request_id {request_id!r} is already running")
        prefill = prepared.kind is RequestKind.PREFILL
        live = LiveRequest(
            request_id,
            request.session_id,
            supersedable=prepared.kind is not RequestKind.GENERATION,
            prefill=prefill,
            next_edit=prepared.next_edit,
            model=role,
        )
        for older in self.live.add(live):
            self._abort(older)
        counters = self.model_counters[role]
        counters.arrived()
        self._idle.clear()
        outcome = CallOutcome()
        try:
            try:
                fitted, clamped_to = await asyncio.to_thread(prepared.fit)
            except (RequestError, ValueError) as bad:
                outcome.ended = True
                counters.finished(None, cancelled=False)
                raise CallFailed(Failure.INVALID_ARGUMENT, str(bad)) from None
            if live.stop_status is None:  # not superseded or cancelled while its prompt was being fitted
                engine_request = prepared.engine_request(request_id, fitted)
                deltas = self._engine_deltas(served, counters, live, engine_request, arrival, outcome)
                async for delta in deltas:
                    yield prepared.chunk_class(request_id=request_id, text_delta=delta)
            else:
                outcome.finish = FinishReason.CANCELLED
            if prefill and outcome.metrics is not None:
                outcome.metrics = replace(outcome.metrics, generated_tokens=0)
                outcome.last_delta, outcome.first_token_ms = "", None
            outcome.ended = True
            counters.finished(outcome.metrics, cancelled=outcome.finish is FinishReason.CANCELLED)
            total_ms = (time.perf_counter() - arrival) * 1000
            yield prepared.chunk_class(
                request_id=request_id,
                text_delta=outcome.last_delta,
                done=True,
                finish_reason=FINISH_REASONS.get(
                    outcome.finish or FinishReason.ERROR, pb.FINISH_REASON_ERROR
                ),
                figures=request_figures(
                    outcome.metrics, fitted.truncated_tokens, outcome.first_token_ms, total_ms, clamped_to
                ),
            )
            status = final_status(live, outcome)
            if status is not None:
                raise CallFailed(*status)
        finally:
            if not outcome.ended:
                # The face stopped iterating: its client cancelled, disconnected or passed its deadline.
                served.backend.abort(request_id)
                counters.finished(outcome.metrics, cancelled=True)
            self.live.remove(live)
            if not len(self.live):
                self._idle.set()

    async def _engine_deltas(
        self,
        served: ServedModel,
        counters: DaemonCounters,
        live: LiveRequest,
        engine_request: Request,
        arrival: float,
        outcome: CallOutcome,
    ) -> AsyncIterator[str]:
        """The request's text deltas from the engine; the finished output's facts go into `outcome`."""
        outputs = served.backend.generate(engine_request)
        try:
            async with contextlib.aclosing(outputs):
                async for output in outputs:
                    if output.token_ids and engine_request.kind is not RequestKind.PREFILL:
                        counters.tokens_generated(len(output.token_ids))
                        if outcome.first_token_ms is None:
                            outcome.first_token_ms = (time.perf_counter() - arrival) * 1000
                    if output.finished:
                        outcome.metrics, outcome.finish = output.metrics, output.finish_reason
                        outcome.failure, outcome.last_delta = output.error, output.delta
                        return
                    if live.stop_status is not None:  # stopped before the engine knew the request
                        served.backend.abort(engine_request.request_id)
                    if output.delta and engine_request.kind is not RequestKind.PREFILL:
                        yield output.delta
        except EngineError as raised:  # refused when submitted (bad values, queue full)
            outcome.finish, outcome.failure = FinishReason.ERROR, raised
