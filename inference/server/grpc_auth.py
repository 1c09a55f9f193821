"""The gRPC listener's token check: an interceptor over `bearer_token.BearerToken`, the check the HTTP
face makes too."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from inference.server.bearer_token import AUTH_METADATA_KEY, BearerToken


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
