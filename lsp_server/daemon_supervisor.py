"""Finding, starting and restarting the inference daemon for the language server.

The server uses the daemon at ``codedraft.daemon.address`` when set (and never starts one there);
otherwise the one on the default unix socket, starting ``codedraft daemon`` there when none answers.
A daemon that dies is restarted with exponential back-off; between attempts requests fail fast with
a reason instead of waiting, and the user is told once (through :class:`StatusReporter`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import DaemonError, InferenceClient
from inference.daemon_launcher import (
    DaemonProcess,
    DaemonStartError,
    TokenFileError,
    daemon_command,
    read_token_file,
)
from inference.defaults import default_socket_path
from lsp_server.config import DaemonSettings
from lsp_server.model_room import ModelRoom, serving_model
from lsp_server.status import StatusReporter

PREFIX_ONLY_MESSAGE = (
    "ready; the model has no fill-in-the-middle tokens, so suggestions see only the code above the "
    "cursor (the code below only ends them)"
)
log = logging.getLogger(__name__)

READY_TIMEOUT_S = 300.0
MIN_BACKOFF_S = 1.0
MAX_BACKOFF_S = 60.0
CANCEL_TIMEOUT_S = 1.0


class RequestRejected(Exception):
    """The daemon refused or failed the request itself (bad argument, full KV pool or queue)."""


def stream_error(error: DaemonError) -> Exception:
    """What a daemon error becomes for the callers of a stream (``StreamComplete``'s contract): a
    timeout, a lost daemon (``ConnectionError``), or a rejected request."""
    if error.code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return TimeoutError(error.message)
    if error.code == grpc.StatusCode.UNAVAILABLE:
        return ConnectionError(error.message or error.code.name)
    return RequestRejected(f"{error.code.name}: {error.message}")


class DaemonSupervisor:
    """Holds the connection to the daemon (and the daemon process, when the server started it)."""

    def __init__(self, settings: Callable[[], DaemonSettings], status: StatusReporter) -> None:
        self._settings = settings
        self._status = status
        self._client: InferenceClient | None = None
        self._ready = False
        self._process: DaemonProcess | None = None
        self._lock = asyncio.Lock()
        self._backoff_s = MIN_BACKOFF_S
        self._retry_at = 0.0
        self._waiting: asyncio.Task[None] | None = None
        self._room = ModelRoom()
        self._next_edit_room = ModelRoom()
        self._supports_tools = False
        self._model = pb.ModelDescription()

    @property
    def room(self) -> ModelRoom:
        """The served model's room (context, reply reserve, characters per token); zeros until the
        daemon has said."""
        return self._room

    @property
    def next_edit_room(self) -> ModelRoom:
        """The room of the model that serves next-edit predictions (the chat model, when the daemon
        serves one for them)."""
        return self._next_edit_room

    @property
    def supports_tools(self) -> bool:
        """Whether the chat model's template takes tool calls (False until the daemon said)."""
        return self._supports_tools

    @property
    def model(self) -> pb.ModelDescription:
        """The description of the model serving chat tasks (the fix agent's): the only model, or the
        chat model of a daemon serving two (empty until the daemon has said)."""
        return self._model

    @property
    def address(self) -> str:
        configured = self._settings().address
        return configured or f"unix:{default_socket_path()}"

    async def client(self) -> InferenceClient:
        """A client of a ready daemon; raises ``ConnectionError`` saying why there is none yet."""
        if self._client is not None and self._ready:
            # A daemon this server started that was killed is noticed here: calls to it need not fail
            # with UNAVAILABLE (they wait for the channel until their deadline), so they cannot tell.
            if (exited := self._process.failure() if self._process is not None else None) is None:
                return self._client
            self.failed(ConnectionError(f"the daemon exited: {exited}"))
        if time.monotonic() < self._retry_at:
            raise ConnectionError(f"{self._status.status.message} (next attempt in {self._retry_in():.0f} s)")
        async with self._lock:
            if self._client is not None and self._ready:
                return self._client
            if self._waiting is not None and not self._waiting.done():
                raise ConnectionError("the daemon is starting (model loading)")
            await self._connect_or_start()
        assert self._client is not None
        if not self._ready:
            raise ConnectionError("the daemon is starting (model loading)")
        return self._client

    def failed(self, error: Exception) -> None:
        """A call failed in a way that says the daemon is gone: reconnect later, with back-off."""
        self._ready = False
        self._retry_at = time.monotonic() + self._backoff_s
        self._backoff_s = min(MAX_BACKOFF_S, self._backoff_s * 2)
        self._status.update(daemon_state="degraded", message=f"the inference daemon is unavailable: {error}")

    def stream_complete(
        self, request: pb.CompleteRequest, timeout_s: float
    ) -> AsyncIterator[pb.CompleteChunk]:
        """The completion service's view of the daemon: chunks, ``TimeoutError`` or ``ConnectionError``."""
        return self._stream("complete", request, timeout_s)

    def stream_generate(
        self, request: pb.GenerateRequest, timeout_s: float
    ) -> AsyncIterator[pb.GenerateChunk]:
        """Like :meth:`stream_complete`, for ``Generate`` (refactors and fixes)."""
        return self._stream("generate", request, timeout_s)

    async def cancel(self, request_id: str) -> bool:
        """Asks the daemon to stop ``request_id``, whose stream then ends with its figures; False when
        the request had already ended or the daemon cannot be asked."""
        if self._client is None or not self._ready:
            return False
        try:
            return await self._client.cancel(request_id, timeout=CANCEL_TIMEOUT_S)
        except DaemonError:
            return False

    async def prefill(self, request: pb.CompleteRequest, timeout_s: float) -> pb.PrefillResponse | None:
        """Asks the daemon to compute the prompt of ``request`` ahead of the completion (``Prefill``);
        None while no daemon is ready (a prefill never starts or waits for one). Raises like
        :meth:`stream_complete`; a prefill that a completion superseded raises ``RequestRejected``."""
        if self._client is None or not self._ready:
            return None
        try:
            return await self._client.prefill(request, timeout=timeout_s)
        except DaemonError as error:
            raise self._mapped(error) from None

    async def predict_edit(self, request: pb.PredictEditRequest, timeout_s: float) -> pb.PredictEditReply:
        """The daemon's rewrite of a next-edit region (``PredictEdit``); raises like
        :meth:`stream_complete`."""
        client = await self.client()
        try:
            return await client.predict_edit(request, timeout=timeout_s)
        except DaemonError as error:
            raise self._mapped(error) from None

    async def _stream(self, method: str, request: Any, timeout_s: float) -> AsyncIterator[Any]:
        client = await self.client()
        try:
            async for chunk in getattr(client, method)(request, timeout=timeout_s):
                yield chunk
        except DaemonError as error:
            raise self._mapped(error) from None

    def _mapped(self, error: DaemonError) -> Exception:
        """What a daemon error becomes for the callers: a timeout, a lost daemon (marked failed), or a
        rejected request."""
        mapped = stream_error(error)
        if isinstance(mapped, ConnectionError):
            self.failed(error)
        return mapped

    async def close(self) -> None:
        """Closes the connection and stops a daemon this server started."""
        if self._waiting is not None:
            self._waiting.cancel()
        if self._client is not None:
            await self._client.close()
            self._client = None
        if self._process is not None:
            await self._process.stop_async(timeout_s=10.0)
        self._process = None

    async def _connect_or_start(self) -> None:
        settings = self._settings()
        token = _read_token(settings.token_file)
        if self._client is None:
            tls_ca = Path(settings.tls_ca).expanduser() if settings.tls_ca else None
            self._client = InferenceClient(self.address, token, tls=settings.tls, tls_ca=tls_ca)
        health = await self._client.health(timeout=1.0)
        if health == "SERVING":
            await self._became_ready()
            return
        if health == "UNREACHABLE":
            if settings.address:
                self.failed(ConnectionError(f"nothing answers at {settings.address}"))
                raise ConnectionError(f"no daemon answers at {settings.address}")
            self._start_process(settings)
        self._status.update(daemon_state="loading", message="the model is loading")
        self._waiting = asyncio.ensure_future(self._wait_ready())

    async def _wait_ready(self) -> None:
        """Waits until the daemon serves; gives up when a daemon we started exits, or after the timeout."""
        assert self._client is not None
        try:
            if self._process is not None:
                await self._process.wait_ready(self._client, READY_TIMEOUT_S)
            else:
                await self._client.wait_ready(timeout=READY_TIMEOUT_S)
        except (DaemonStartError, DaemonError) as error:
            self.failed(error)
            return
        await self._became_ready()

    async def _became_ready(self) -> None:
        assert self._client is not None
        self._ready = True
        self._backoff_s = MIN_BACKOFF_S
        self._retry_at = 0.0
        model, device, prefix_only = None, None, False
        try:
            info = await self._client.model_info(timeout=5.0)
            model, device, prefix_only = info.model.name, info.device, info.prefix_only
            self._room = ModelRoom.of(info)
            self._next_edit_room = ModelRoom.of_task(info, "predict_edit")
            chat = serving_model(info, "generate_chat")
            self._supports_tools = chat.supports_tools
            self._model = chat.model
            if chat is not info:
                model = f"{model} (chat: {chat.model.name})"
        except DaemonError as error:
            log.warning("could not read the daemon's model info: %s", error)
        message = PREFIX_ONLY_MESSAGE if prefix_only else "ready"
        self._status.update(
            daemon_state="ready", message=message, model=model, device=device, prefix_only=prefix_only
        )

    def _start_process(self, settings: DaemonSettings) -> None:
        if self._process is not None and self._process.failure() is None:
            return
        command = daemon_command(
            self.address,
            model=settings.model,
            draft_model=settings.draft_model,
            device=settings.device,
            command=settings.command,
        )
        log_path = default_socket_path().parent / "daemon.log"
        log.info("starting the daemon: %s (log: %s)", " ".join(command), log_path)
        self._process = DaemonProcess(command, log_path, detach=True)

    def _retry_in(self) -> float:
        return max(0.0, self._retry_at - time.monotonic())


def _read_token(path: str | None) -> str | None:
    if not path:
        return None
    try:
        return read_token_file(path)
    except TokenFileError as error:
        log.warning("codedraft.daemon.tokenFile: %s", error)
        return None
