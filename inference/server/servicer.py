"""`codedraft.v1.Inference` over grpc.aio: proto requests to engine requests, outputs to chunks.

Every call ends with a status a person can act on. A stream that the engine finished sends a last
chunk (done, finish reason, figures); a stream stopped by the daemon then ends with the reason's
status (CANCELLED for Cancel and cancel-previous, UNAVAILABLE for shutdown), and one that failed
with the error's status. A client that cancels, disconnects or runs past its deadline makes grpc
cancel the handler; its `finally` aborts the engine request, which frees the KV blocks within one step.

Prefill runs the same path as Complete, on the prompt Complete would build, as an engine request of
kind PREFILL that samples one token nobody sees (the prompt's KV is what it is for): the engine runs
it last and preempts it first, and a later Complete of the session supersedes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

import grpc

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.served_model import ServedModel
from inference.config import RequestKind
from inference.engine.errors import EngineError
from inference.engine.sequence import FinishReason, Request
from inference.server import validation
from inference.server.call_outcome import CallOutcome, final_status
from inference.server.counters import FINISH_REASONS, DaemonCounters, request_figures
from inference.server.live_requests import LiveRequest, LiveRequests, request_id_for
from inference.server.prepare import PreparedRequest, prepare_complete, prepare_generate, prepare_prefill
from inference.server.validation import RequestError, UndecodableRequest

log = logging.getLogger(__name__)

SERVICE_NAME = "codedraft.v1.Inference"


class InferenceServicer:
    """The service's handlers; `attach` makes them serve once the model has loaded."""

    def __init__(self) -> None:
        self.served: ServedModel | None = None
        self.counters = DaemonCounters()
        self.live = LiveRequests()
        self.shutting_down = False
        self._idle = asyncio.Event()
        self._idle.set()

    def attach(self, served: ServedModel) -> None:
        self.served = served

    def method_handlers(self) -> grpc.GenericRpcHandler:
        """The service's handlers, with deserializers that turn undecodable bytes into INVALID_ARGUMENT."""

        def unary_stream(method: Callable[..., Any], request: Any, response: Any) -> grpc.RpcMethodHandler:
            return grpc.unary_stream_rpc_method_handler(
                method, validation.lenient_deserializer(request), response.SerializeToString
            )

        def unary(method: Callable[..., Any], request: Any, response: Any) -> grpc.RpcMethodHandler:
            return grpc.unary_unary_rpc_method_handler(
                method, validation.lenient_deserializer(request), response.SerializeToString
            )

        return grpc.method_handlers_generic_handler(
            SERVICE_NAME,
            {
                "Complete": unary_stream(self.Complete, pb.CompleteRequest, pb.CompleteChunk),
                "Generate": unary_stream(self.Generate, pb.GenerateRequest, pb.GenerateChunk),
                "Prefill": unary(self.Prefill, pb.CompleteRequest, pb.PrefillResponse),
                "Cancel": unary(self.Cancel, pb.CancelRequest, pb.CancelResponse),
                "GetModelInfo": unary(self.GetModelInfo, pb.GetModelInfoRequest, pb.ModelInfo),
                "GetStats": unary(self.GetStats, pb.GetStatsRequest, pb.Stats),
            },
        )

    async def _ready(self, request: Any, context: grpc.aio.ServicerContext) -> ServedModel:
        if isinstance(request, UndecodableRequest):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"cannot parse the {request.message_type} message ({request.reason}); string fields "
                "must be valid UTF-8",
            )
        if self.shutting_down:
            await context.abort(
                grpc.StatusCode.UNAVAILABLE, "the daemon is shutting down; retry with a new one"
            )
        if self.served is None:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "the model is still loading; retry in a moment")
        assert self.served is not None
        return self.served

    async def Complete(
        self, request: Any, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.CompleteChunk]:
        arrival = time.perf_counter()
        served = await self._ready(request, context)
        try:
            prepared = prepare_complete(request, served)
        except RequestError as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        async for chunk in self._serve(served, request, context, arrival, prepared):
            yield chunk

    async def Generate(
        self, request: Any, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.GenerateChunk]:
        arrival = time.perf_counter()
        served = await self._ready(request, context)
        try:
            prepared = prepare_generate(request, served)
        except RequestError as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        async for chunk in self._serve(served, request, context, arrival, prepared):
            yield chunk

    async def Prefill(self, request: Any, context: grpc.aio.ServicerContext) -> pb.PrefillResponse:
        arrival = time.perf_counter()
        served = await self._ready(request, context)
        if not served.prefills:
            return pb.PrefillResponse(
                request_id=request.request_id,
                skipped="the daemon serves a remote engine, which could not pre-empt a prefill",
            )
        try:
            prepared = prepare_prefill(request, served)
        except RequestError as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        last: Any = None
        async for chunk in self._serve(served, request, context, arrival, prepared):
            last = chunk
        if last is None or last.finish_reason in (pb.FINISH_REASON_CANCELLED, pb.FINISH_REASON_ERROR):
            return pb.PrefillResponse()  # the status set by _serve (CANCELLED, …) is what the caller gets
        return pb.PrefillResponse(request_id=last.request_id, prefilled=True, figures=last.figures)

    async def _serve(
        self,
        served: ServedModel,
        request: Any,
        context: grpc.aio.ServicerContext,
        arrival: float,
        prepared: PreparedRequest,
    ) -> AsyncIterator[Any]:
        """Registers the call, fits its prompt, streams the engine's outputs, and sets the final status."""
        request_id = request_id_for(request.request_id)
        if request_id in self.live:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"request_id {request_id!r} is already running"
            )
        prefill = prepared.kind is RequestKind.PREFILL
        live = LiveRequest(
            request_id,
            request.session_id,
            supersedable=prepared.kind is not RequestKind.GENERATION,
            prefill=prefill,
        )
        for older in self.live.add(live):
            served.backend.abort(older.request_id)
        self.counters.requests_total += 1
        self._idle.clear()
        outcome = CallOutcome()
        try:
            try:
                prepared.sampling.validate()
                fitted, clamped_to = await asyncio.to_thread(prepared.fit)
            except (RequestError, ValueError) as bad:
                outcome.ended = True
                self.counters.finished(None, cancelled=False)
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(bad))
            if live.stop_status is None:  # not superseded or cancelled while its prompt was being fitted
                engine_request = prepared.engine_request(request_id, fitted)
                async for delta in self._engine_deltas(served, live, engine_request, arrival, outcome):
                    yield prepared.chunk_class(request_id=request_id, text_delta=delta)
            else:
                outcome.finish = FinishReason.CANCELLED
            if prefill and outcome.metrics is not None:
                outcome.metrics = replace(outcome.metrics, generated_tokens=0)
                outcome.last_delta, outcome.first_token_ms = "", None
            outcome.ended = True
            self.counters.finished(outcome.metrics, cancelled=outcome.finish is FinishReason.CANCELLED)
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
                context.set_code(status[0])
                context.set_details(status[1])
        finally:
            if not outcome.ended:
                # The client cancelled, disconnected or passed its deadline: grpc cancelled this handler.
                served.backend.abort(request_id)
                self.counters.finished(outcome.metrics, cancelled=True)
            self.live.remove(live)
            if not len(self.live):
                self._idle.set()

    async def _engine_deltas(
        self,
        served: ServedModel,
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
                        self.counters.tokens_generated(len(output.token_ids))
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

    async def Cancel(self, request: Any, context: grpc.aio.ServicerContext) -> pb.CancelResponse:
        if isinstance(request, UndecodableRequest):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"cannot parse {request.message_type}")
        live = self.live.stop(request.request_id, grpc.StatusCode.CANCELLED, "cancelled by a Cancel call")
        if live is None:
            return pb.CancelResponse(cancelled=False)
        if self.served is not None:
            self.served.backend.abort(request.request_id)
        return pb.CancelResponse(cancelled=True)

    async def GetModelInfo(self, request: Any, context: grpc.aio.ServicerContext) -> pb.ModelInfo:
        served = await self._ready(request, context)
        return served.info

    async def GetStats(self, request: Any, context: grpc.aio.ServicerContext) -> pb.Stats:
        backend = self.served.backend.stats() if self.served is not None else None
        return self.counters.to_proto(len(self.live), backend)

    async def drain(self, grace_seconds: float, reason: str = "shutdown") -> int:
        """Refuse new calls, give live ones `grace_seconds` to finish, then stop the rest with UNAVAILABLE.

        Returns how many calls were stopped.
        """
        self.shutting_down = True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), grace_seconds)
        stopped = 0
        for live in self.live.all():
            self.live.stop(
                live.request_id,
                grpc.StatusCode.UNAVAILABLE,
                f"the daemon is shutting down ({reason}); the request was stopped, retry with a new daemon",
            )
            if self.served is not None:
                self.served.backend.abort(live.request_id)
            stopped += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), 10.0)
        return stopped
