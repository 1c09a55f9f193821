"""The bearer-token check of every call (gRPC and HTTP alike) when the daemon was started with
``--token-file``."""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

AUTH_METADATA_KEY = "authorization"


class BearerToken:
    """The one check of ``Bearer <token>`` credentials, for every face.

    The comparison is constant-time so the token cannot be guessed byte by byte from response times.
    """

    def __init__(self, token: str) -> None:
        self._expected = f"Bearer {token}".encode()

    def problem(self, given: str | bytes | None, field: str, where: str) -> str | None:
        """Why credentials ``given`` in ``field`` (as the caller names it, ``where``) are refused, or
        None when they are right."""
        if given is None:
            return f"this daemon needs a token: send '{field}: Bearer TOKEN'"
        given_bytes = given.encode() if isinstance(given, str) else bytes(given)
        if not hmac.compare_digest(given_bytes, self._expected):
            return f"wrong token in {where}"
        return None


class TokenAuthInterceptor(grpc.aio.ServerInterceptor):
    """Lets a call through only with metadata ``authorization: Bearer <token>``; else UNAUTHENTICATED."""

    def __init__(self, token: str) -> None:
        self._token = BearerToken(token)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        metadata = dict(handler_call_details.invocation_metadata or ())
        problem = self._token.problem(
            metadata.get(AUTH_METADATA_KEY), AUTH_METADATA_KEY, f"'{AUTH_METADATA_KEY}' metadata"
        )
        return handler if problem is None else _denying_handler(handler, problem)


def _denying_handler(handler: grpc.RpcMethodHandler | None, message: str) -> grpc.RpcMethodHandler:
    """A handler of the same shape as `handler` that fails the call with UNAUTHENTICATED."""

    async def deny_unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

    async def deny_stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)
        yield  # pragma: no cover - makes this an async generator

    if handler is None:
        return grpc.unary_unary_rpc_method_handler(deny_unary)
    deserialize = handler.request_deserializer
    serialize = handler.response_serializer
    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(deny_stream, deserialize, serialize)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(deny_unary, deserialize, serialize)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(deny_stream, deserialize, serialize)
    return grpc.unary_unary_rpc_method_handler(deny_unary, deserialize, serialize)
