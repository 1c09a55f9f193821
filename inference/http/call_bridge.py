"""One HTTP face request run through the gRPC servicer's own `Complete` and `Generate` handlers.

The handlers talk to a grpc `ServicerContext` only through `abort`, `set_code` and `set_details`;
`FaceCallContext` provides those three, so an HTTP request takes exactly the path a gRPC call takes.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from typing import Any

import grpc

from inference.server.servicer import InferenceServicer

# HTTP status for each gRPC status a call can end with.
HTTP_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.CANCELLED: 499,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}


class FaceCallError(Exception):
    """A call that ended with a gRPC error status; `http_status` is what the HTTP face answers."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def http_status(self) -> int:
        return HTTP_STATUS.get(self.code, 500)

    @property
    def error_type(self) -> str:
        return "invalid_request_error" if self.http_status == 400 else self.code.name.lower()


class FaceCallContext:
    """The part of `grpc.aio.ServicerContext` the servicer uses: abort raises, the final status is kept."""

    def __init__(self) -> None:
        self.code: grpc.StatusCode | None = None
        self.details = ""

    async def abort(self, code: grpc.StatusCode, details: str = "") -> None:
        raise FaceCallError(code, details)

    def set_code(self, code: grpc.StatusCode) -> None:
        self.code = code

    def set_details(self, details: str) -> None:
        self.details = details

    def failure(self) -> FaceCallError | None:
        """The error the call ended with after its last chunk, or None when it succeeded."""
        if self.code is None or self.code is grpc.StatusCode.OK:
            return None
        return FaceCallError(self.code, self.details)


async def run_call(servicer: InferenceServicer, request: Any) -> AsyncGenerator[Any, None]:
    """The chunks of a Complete or Generate request served by `servicer`.

    Raises FaceCallError when the call is refused or ends with an error status (after its last chunk).
    Leaving the iteration early (the HTTP client went away) stops the request like a gRPC cancel.
    """
    context = FaceCallContext()
    handler = servicer.Complete if request.DESCRIPTOR.name == "CompleteRequest" else servicer.Generate
    chunks: Any = handler(request, context)  # type: ignore[arg-type]
    async with contextlib.aclosing(chunks):
        async for chunk in chunks:
            yield chunk
    failure = context.failure()
    if failure is not None:
        raise failure
