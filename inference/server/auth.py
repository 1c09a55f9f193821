"""Bearer-token check for every call when the daemon was started with ``--token-file``."""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

AUTH_METADATA_KEY = "authorization"


class TokenAuthInterceptor(grpc.aio.ServerInterceptor):
    """Lets a call through only with metadata ``authorization: Bearer <token>``; else UNAUTHENTICATED.

    The comparison is constant-time so the token cannot be guessed byte by byte from response times.
    """

    def __init__(self, token: str) -> None:
        self._expected = f"Bearer {token}".encode()

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        metadata = dict(handler_call_details.invocation_metadata or ())
        given = metadata.get(AUTH_METADATA_KEY)
        if given is None:
            return _denying_handler(handler, "this daemon needs a token: send 'authorization: Bearer TOKEN'")
        given_bytes = given.encode() if isinstance(given, str) else bytes(given)
        if not hmac.compare_digest(given_bytes, self._expected):
            return _denying_handler(handler, "wrong token in 'authorization' metadata")
        return handler


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
