"""The daemon's HTTP face: the OpenAI API and llama.cpp's ``/infill`` on aiohttp, over the request
runner that the gRPC face uses too (same checks, prompt building, cancel-previous, counters, KV reuse).

Same rules as the gRPC listener: a bearer token on every call when the daemon has one, TLS when
given a certificate, and no plain-text listener off loopback (`listen.check_tcp_security`, which the
gRPC listener and the command line call too).
A client that closes its connection cancels the handler (``handler_cancellation``), which stops the
request in the engine exactly as a cancelled gRPC call does.
"""

from __future__ import annotations

import json
import logging
import ssl
from collections.abc import AsyncGenerator, Callable
from typing import Any

from aiohttp import web

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.served_models import COMPLETE, GENERATE_CHAT
from inference.call_status import CallFailed
from inference.defaults import DEFAULT_MAX_REQUEST_BYTES
from inference.http.openai_replies import ReplyShape, finish_reason, infill_event
from inference.http.openai_requests import (
    FaceRequest,
    FaceRequestError,
    chat_request,
    completions_request,
    infill_request,
)
from inference.http.request_guard import IDLE_CLOSE_S, READ_TIMEOUT_S, error_reply, guard, read_json
from inference.server.address import DaemonAddress
from inference.server.listen import ListenError, check_tcp_security
from inference.server.request_runner import RequestRunner

log = logging.getLogger(__name__)


def _error_type(failed: CallFailed) -> str:
    """OpenAI's ``error.type`` for a failure."""
    return "invalid_request_error" if failed.failure.http_status == 400 else failed.failure.name.lower()


def failure_reply(failed: CallFailed) -> web.Response:
    """The error reply of a refused or failed call."""
    return error_reply(failed.failure.http_status, failed.message, _error_type(failed))


async def _collected(first: Any, chunks: AsyncGenerator[Any, None]) -> tuple[str, Any]:
    """The whole text of a call from its first chunk on, and its last chunk; raises CallFailed when
    the call failed (also after its final chunk)."""
    parts, last = [first.text_delta], first
    while not last.done:
        last = await anext(chunks)
        parts.append(last.text_delta)
    await anext(chunks, None)  # the call's final status
    return "".join(parts), last


async def _sse(response: web.StreamResponse, event: dict[str, Any] | str) -> None:
    data = event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)
    await response.write(f"data: {data}\n\n".encode())


Events = Callable[[Any, bool], list[dict[str, Any]]]
"""The server-sent events of one chunk (and whether it is the first)."""


async def _stream_events(
    request: web.Request, first: Any, chunks: AsyncGenerator[Any, None], events: Events, done: str | None
) -> web.StreamResponse:
    """The one server-sent-events loop: each chunk's events, a failure after the last chunk as an
    error event, then ``done`` (OpenAI's ``[DONE]``; llama.cpp sends none)."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    chunk = first
    try:
        while True:
            for event in events(chunk, chunk is first):
                await _sse(response, event)
            if chunk.done:
                break
            chunk = await anext(chunks)
        await anext(chunks, None)  # the call's final status: raises when it failed
    except CallFailed as failed:
        await _sse(response, {"error": {"message": failed.message, "type": _error_type(failed)}})
    if done is not None:
        await _sse(response, done)
    await response.write_eof()
    return response


class HttpFace:
    """The aiohttp application and its listener on one TCP address."""

    def __init__(
        self,
        runner: RequestRunner,
        address: DaemonAddress,
        token: str | None = None,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
        ssl_context: ssl.SSLContext | None = None,
        read_timeout_s: float = READ_TIMEOUT_S,
        idle_close_s: float = IDLE_CLOSE_S,
    ) -> None:
        if address.is_unix:
            raise ListenError(f"--http needs tcp:HOST:PORT, got {address}")
        self.runner = runner
        self.address = address
        self.token = token
        self.ssl_context = ssl_context
        self.read_timeout_s = read_timeout_s
        self.idle_close_s = idle_close_s
        self.app = web.Application(
            middlewares=[guard(token, max_request_bytes)], client_max_size=max_request_bytes
        )
        self.app.add_routes(
            [
                web.get("/health", self.health),
                web.get("/v1/models", self.models),
                web.post("/v1/completions", self.completions),
                web.post("/v1/chat/completions", self.chat_completions),
                web.post("/infill", self.infill),
                web.post("/v1/infill", self.infill),
            ]
        )
        self._runner: web.AppRunner | None = None

    async def start(self) -> DaemonAddress:
        """Listen; returns the bound address (port 0 resolved)."""
        check_tcp_security(self.address, self.token, self.ssl_context is not None)
        runner = web.AppRunner(
            self.app, handler_cancellation=True, access_log=None, keepalive_timeout=self.idle_close_s
        )
        await runner.setup()
        site = web.TCPSite(runner, self.address.host, self.address.port, ssl_context=self.ssl_context)
        try:
            await site.start()
        except OSError as error:
            await runner.cleanup()
            raise ListenError(f"cannot listen on {self.address} for HTTP: {error}") from None
        self._runner = runner
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        port = sockets[0].getsockname()[1] if sockets else self.address.port
        self.address = DaemonAddress(host=self.address.host, port=port)
        scheme = "https" if self.ssl_context is not None else "http"
        log.info("OpenAI and /infill HTTP face on %s://%s", scheme, self.address.grpc_target())
        return self.address

    async def stop(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    def _model_name(self, task: str) -> str:
        """The name of the model that serves `task` ("" while loading)."""
        models = self.runner.models
        return models.for_task(task).info.model.name if models is not None else ""

    async def health(self, request: web.Request) -> web.Response:
        if self.runner.models is None:
            return error_reply(503, "the model is still loading", "unavailable")
        return web.json_response({"status": "ok"})

    async def models(self, request: web.Request) -> web.Response:
        models = self.runner.models
        data = []
        for _, served in models.roles() if models is not None else ():
            data.append(
                {
                    "id": served.info.model.name,
                    "object": "model",
                    "owned_by": "codedraft",
                    "max_model_len": served.context_length,
                }
            )
        return web.json_response({"object": "list", "data": data})

    async def _body(self, request: web.Request) -> Any:
        return await read_json(request, self.read_timeout_s)

    def _detokenize(self, ids: Any) -> str:
        """A /v1/completions prompt of token ids as text (the completion model's tokens: it serves
        raw prompts and infills alike)."""
        models = self.runner.models
        if models is None:
            raise FaceRequestError("the model is still loading; retry in a moment")
        served = models.for_task(COMPLETE)
        if max(ids) >= served.tokenizer.vocab_size or min(ids) < 0:
            raise FaceRequestError(f"prompt token ids must be in [0, {served.tokenizer.vocab_size})")
        return served.tokenizer.decode(ids)

    async def completions(self, request: web.Request) -> web.StreamResponse:
        try:
            face = completions_request(await self._body(request), self._detokenize)
        except FaceRequestError as error:
            return error_reply(400, str(error), "invalid_request_error")
        return await self._openai(request, face, chat=False)

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        try:
            face = chat_request(await self._body(request))
        except FaceRequestError as error:
            return error_reply(400, str(error), "invalid_request_error")
        return await self._openai(request, face, chat=True)

    def _chunks(self, proto: Any) -> AsyncGenerator[Any, None]:
        if isinstance(proto, pb.CompleteRequest):
            return self.runner.complete(proto)
        return self.runner.generate(proto)

    async def _openai(self, request: web.Request, face: FaceRequest, chat: bool) -> web.StreamResponse:
        named = face.model or self._model_name(GENERATE_CHAT if chat else COMPLETE)
        shape = ReplyShape(face.proto.request_id, named, chat)

        def events(chunk: Any, first: bool) -> list[dict[str, Any]]:
            shown = [shape.stream_event(chunk.text_delta, finish_reason(chunk), first)]
            if chunk.done and face.include_usage:
                shown.append(shape.usage_event(chunk.figures))
            return shown

        def whole(text: str, last: Any) -> dict[str, Any]:
            return shape.whole(text, finish_reason(last), last.figures)

        return await self._reply(request, face, whole, events, "[DONE]")

    async def _reply(
        self,
        request: web.Request,
        face: FaceRequest,
        whole: Callable[[str, Any], dict[str, Any]],
        events: Events,
        done: str | None,
    ) -> web.StreamResponse:
        """Runs ``face``'s request and answers with one JSON object (``whole`` of the text and the last
        chunk) or, when it asked to stream, server-sent ``events``; a refused call is an error reply."""
        chunks = self._chunks(face.proto)
        try:
            try:
                first = await anext(chunks)
                if not face.stream:
                    text, last = await _collected(first, chunks)
                    return web.json_response(whole(text, last))
            except CallFailed as failed:
                return failure_reply(failed)
            return await _stream_events(request, first, chunks, events, done)
        finally:
            await chunks.aclose()

    async def infill(self, request: web.Request) -> web.StreamResponse:
        try:
            face = infill_request(await self._body(request))
        except FaceRequestError as error:
            return error_reply(400, str(error), "invalid_request_error")
        model = self._model_name(COMPLETE)

        def events(chunk: Any, first: bool) -> list[dict[str, Any]]:
            return [infill_event(chunk.text_delta, model, chunk if chunk.done else None)]

        def whole(text: str, last: Any) -> dict[str, Any]:
            return infill_event(text, model, last)

        return await self._reply(request, face, whole, events, None)
