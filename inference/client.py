"""A client of the codedraft daemon for the language server, the CLI and Python IDE plugins.

Imports no torch (nor anything that does), so the language server pays only for grpc:

    async with InferenceClient("unix:/run/user/1000/codedraft/daemon.sock") as client:
        await client.wait_ready(timeout=60)
        async for chunk in client.complete(pb.CompleteRequest(prefix="def add(a, b):\n", session_id="doc1")):
            print(chunk.text_delta, end="")

Every call has a deadline (per-call `timeout`, else the defaults below) and waits for the channel to
become ready within it (`wait_for_ready`), so a daemon that is restarting is reconnected to instead of
failing at once; grpc redials with a short backoff. Failures raise `DaemonError` with the status code
and the daemon's message. A stream that the daemon stopped (Cancel, a newer completion of the same
session) ends normally after its last chunk, whose `finish_reason` is FINISH_REASON_CANCELLED.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.api.codedraft.v1 import inference_pb2_grpc as pb_grpc
from inference.server.address import DaemonAddress, parse_address
from inference.server.bearer_token import AUTH_METADATA_KEY, bearer_credentials
from inference.server.tls import client_root_certificates

COMPLETE_TIMEOUT_S = 30.0
GENERATE_TIMEOUT_S = 600.0
UNARY_TIMEOUT_S = 10.0
# Above any daemon's request limit (ModelInfo.max_request_bytes, `--max-request-mb`): the daemon, not
# the client, refuses a request that is too large, and says which limit it passed.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
_CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 2000),
]


class DaemonError(Exception):
    """A call failed; `code` is the gRPC status and the message is the daemon's explanation."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message

    @classmethod
    def from_rpc(cls, error: grpc.aio.AioRpcError, tls: bool = False, unix: bool = False) -> DaemonError:
        """The error of a failed call on a channel with ``tls`` to a daemon on a ``unix`` socket."""
        return cls(error.code(), explain_transport_failure(error.details() or "", tls, unix))


def explain_transport_failure(details: str, tls: bool = False, unix: bool = False) -> str:
    """grpc's transport message, with what to do when it is a TLS mismatch. A connection closed under
    a plain channel hints at a daemon that expects TLS only over TCP: a daemon on a unix socket that
    closes it has stopped (or restarted)."""
    if "CERTIFICATE_VERIFY_FAILED" in details:
        return f"{details} (the daemon's certificate is not signed by a CA you trust; check --tls-ca)"
    if "Socket closed" in details or "Connection reset" in details:
        if unix:
            return f"{details} (the daemon closed the connection: it stopped or is restarting)"
        if not tls:
            return f"{details} (closed at once: if the daemon uses TLS, connect with --tls-ca or --tls)"
        return details
    if "WRONG_VERSION_NUMBER" in details or "handshake" in details.lower():
        return f"{details} (TLS handshake failed: does the daemon use TLS? it needs --tls-cert on its side)"
    return details


@dataclass
class StreamResult:
    """A whole streamed completion or generation: its text, finish reason and figures."""

    request_id: str = ""
    text: str = ""
    finish_reason: int = pb.FINISH_REASON_UNSPECIFIED
    figures: pb.RequestFigures = field(default_factory=pb.RequestFigures)

    @property
    def finish_reason_name(self) -> str:
        return pb.FinishReason.Name(self.finish_reason).removeprefix("FINISH_REASON_").lower()


class InferenceClient:
    """An asyncio client of one daemon address. Create it inside the event loop that uses it."""

    def __init__(
        self,
        address: str | DaemonAddress,
        token: str | None = None,
        *,
        wait_for_ready: bool = True,
        tls: bool = False,
        tls_ca: str | Path | None = None,
    ) -> None:
        """`wait_for_ready=False` makes calls fail at once (UNAVAILABLE) while no daemon listens.

        `tls` (implied by `tls_ca`) connects over TLS, trusting the PEM roots in `tls_ca` or, without
        it, the system's store.
        """
        self.address = parse_address(address) if isinstance(address, str) else address
        self._wait = wait_for_ready
        self.last_transport_error = ""
        self._metadata: tuple[tuple[str, str], ...] = (
            ((AUTH_METADATA_KEY, bearer_credentials(token)),) if token else ()
        )
        target = self.address.grpc_target()
        self._tls = tls or tls_ca is not None
        if self._tls:
            roots = client_root_certificates(Path(tls_ca) if tls_ca is not None else None)
            credentials = grpc.ssl_channel_credentials(root_certificates=roots)
            self._channel = grpc.aio.secure_channel(target, credentials, options=_CHANNEL_OPTIONS)
        else:
            self._channel = grpc.aio.insecure_channel(target, options=_CHANNEL_OPTIONS)
        self._stub = pb_grpc.InferenceStub(self._channel)
        self._health = health_pb2_grpc.HealthStub(self._channel)

    async def __aenter__(self) -> InferenceClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._channel.close()

    async def health(self, timeout: float = 2.0) -> str:
        """The daemon's health: "SERVING", "NOT_SERVING" (model loading), or "UNREACHABLE"."""
        try:
            reply = await self._health.Check(
                health_pb2.HealthCheckRequest(service=""), timeout=timeout, metadata=self._metadata
            )
        except grpc.aio.AioRpcError as error:
            if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                # Kept only when it names a cause (a TLS mismatch); "connection refused" says nothing new.
                details = error.details() or ""
                explained = explain_transport_failure(details, self._tls, self.address.is_unix)
                self.last_transport_error = explained if explained != details else ""
                return "UNREACHABLE"
            raise self._error(error) from None
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))

    def _error(self, error: grpc.aio.AioRpcError) -> DaemonError:
        return DaemonError.from_rpc(error, self._tls, self.address.is_unix)

    async def wait_ready(self, timeout: float = 60.0) -> None:
        """Wait until the daemon is reachable and its model is loaded; DaemonError after `timeout`."""
        deadline = time.monotonic() + timeout
        status = "UNREACHABLE"
        while time.monotonic() < deadline:
            status = await self.health(timeout=max(0.1, min(2.0, deadline - time.monotonic())))
            if status == "SERVING":
                return
            await asyncio.sleep(0.1)
        why = self.last_transport_error if status == "UNREACHABLE" else ""
        why = f": {why}" if why else ""
        raise DaemonError(
            grpc.StatusCode.UNAVAILABLE,
            f"the daemon at {self.address} is not ready after {timeout:g} s ({status}{why})",
        )

    async def _stream(self, call: Any) -> AsyncIterator[Any]:
        done = False
        try:
            async for chunk in call:
                done = done or chunk.done
                yield chunk
        except grpc.aio.AioRpcError as error:
            if not (done and error.code() == grpc.StatusCode.CANCELLED):
                raise self._error(error) from None
        except BaseException:
            call.cancel()  # the caller stopped reading: stop decoding in the daemon too
            raise

    def complete(
        self, request: pb.CompleteRequest, timeout: float | None = None
    ) -> AsyncIterator[pb.CompleteChunk]:
        """Stream a fill-in-the-middle completion. Leaving the loop early cancels the call."""
        call = self._stub.Complete(
            request, timeout=timeout or COMPLETE_TIMEOUT_S, metadata=self._metadata, wait_for_ready=self._wait
        )
        return self._stream(call)

    def generate(
        self, request: pb.GenerateRequest, timeout: float | None = None
    ) -> AsyncIterator[pb.GenerateChunk]:
        """Stream a generation from chat messages or a raw prompt. Leaving the loop early cancels the call."""
        call = self._stub.Generate(
            request, timeout=timeout or GENERATE_TIMEOUT_S, metadata=self._metadata, wait_for_ready=self._wait
        )
        return self._stream(call)

    async def prefill(self, request: pb.CompleteRequest, timeout: float | None = None) -> pb.PrefillResponse:
        """Have the daemon compute the prompt that `complete(request)` would build, generating nothing,
        so that a completion there reuses its KV. Waits until it is computed (or skipped: see
        `PrefillResponse.skipped`); a prefill stopped by a completion of its session raises DaemonError
        with CANCELLED."""
        result: pb.PrefillResponse = await self._unary(
            self._stub.Prefill, request, timeout or COMPLETE_TIMEOUT_S
        )
        return result

    async def predict_edit(self, request: pb.PredictEditRequest, timeout: float) -> pb.PredictEditReply:
        """The editable region as the model rewrites it (next-edit prediction). Cancelling the task
        that awaits it cancels the call, which stops the daemon's decoding (as for `complete`)."""
        result: pb.PredictEditReply = await self._unary(self._stub.PredictEdit, request, timeout)
        return result

    @staticmethod
    async def collect(chunks: AsyncIterator[Any]) -> StreamResult:
        """Read a whole stream into one `StreamResult`."""
        result = StreamResult()
        pieces: list[str] = []
        async for chunk in chunks:
            result.request_id = chunk.request_id
            pieces.append(chunk.text_delta)
            if chunk.done:
                result.finish_reason = chunk.finish_reason
                result.figures = chunk.figures
        result.text = "".join(pieces)
        return result

    async def _unary(self, method: Any, request: Any, timeout: float | None) -> Any:
        try:
            return await method(
                request,
                timeout=timeout or UNARY_TIMEOUT_S,
                metadata=self._metadata,
                wait_for_ready=self._wait,
            )
        except grpc.aio.AioRpcError as error:
            raise self._error(error) from None

    async def cancel(self, request_id: str, timeout: float | None = None) -> bool:
        """Stop a running request; True when it was still running."""
        reply = await self._unary(self._stub.Cancel, pb.CancelRequest(request_id=request_id), timeout)
        return bool(reply.cancelled)

    async def model_info(self, timeout: float | None = None) -> pb.ModelInfo:
        result: pb.ModelInfo = await self._unary(self._stub.GetModelInfo, pb.GetModelInfoRequest(), timeout)
        return result

    async def stats(self, timeout: float | None = None) -> pb.Stats:
        result: pb.Stats = await self._unary(self._stub.GetStats, pb.GetStatsRequest(), timeout)
        return result
