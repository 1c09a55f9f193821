"""`codedraft.v1.Inference` over grpc.aio: the gRPC face of the request runner.

Each handler hands its proto request to :class:`~inference.server.request_runner.RequestRunner` and
translates a :class:`~inference.call_status.CallFailed` into the call's status: an abort before the
first chunk, the final status after the last one. grpc cancels a handler whose client cancelled,
disconnected or ran past its deadline; the runner then aborts the engine request.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

import grpc

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.call_status import CallFailed
from inference.server import validation
from inference.server.request_runner import RequestRunner
from inference.server.validation import UndecodableRequest

SERVICE_NAME = "codedraft.v1.Inference"


def grpc_code(failed: CallFailed) -> grpc.StatusCode:
    """The gRPC status of a failure (the same name)."""
    return grpc.StatusCode[failed.failure.name]


class InferenceServicer:
    """The service's handlers over `runner`."""

    def __init__(self, runner: RequestRunner) -> None:
        self.runner = runner

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
                "PredictEdit": unary(self.PredictEdit, pb.PredictEditRequest, pb.PredictEditReply),
                "Cancel": unary(self.Cancel, pb.CancelRequest, pb.CancelResponse),
                "GetModelInfo": unary(self.GetModelInfo, pb.GetModelInfoRequest, pb.ModelInfo),
                "GetStats": unary(self.GetStats, pb.GetStatsRequest, pb.Stats),
            },
        )

    async def Complete(
        self, request: Any, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.CompleteChunk]:
        await _parsed(request, context)
        async with contextlib.aclosing(_streamed(self.runner.complete(request), context)) as chunks:
            async for chunk in chunks:
                yield chunk

    async def Generate(
        self, request: Any, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.GenerateChunk]:
        await _parsed(request, context)
        async with contextlib.aclosing(_streamed(self.runner.generate(request), context)) as chunks:
            async for chunk in chunks:
                yield chunk

    async def Prefill(self, request: Any, context: grpc.aio.ServicerContext) -> pb.PrefillResponse:
        await _parsed(request, context)
        try:
            return await self.runner.prefill(request)
        except CallFailed as failed:
            await context.abort(grpc_code(failed), failed.message)
            raise  # abort raised already

    async def PredictEdit(self, request: Any, context: grpc.aio.ServicerContext) -> pb.PredictEditReply:
        await _parsed(request, context)
        try:
            return await self.runner.predict_edit(request)
        except CallFailed as failed:
            await context.abort(grpc_code(failed), failed.message)
            raise

    async def Cancel(self, request: Any, context: grpc.aio.ServicerContext) -> pb.CancelResponse:
        if isinstance(request, UndecodableRequest):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"cannot parse {request.message_type}")
        return pb.CancelResponse(cancelled=self.runner.cancel(request.request_id))

    async def GetModelInfo(self, request: Any, context: grpc.aio.ServicerContext) -> pb.ModelInfo:
        await _parsed(request, context)
        try:
            return self.runner.ready().info()
        except CallFailed as failed:
            await context.abort(grpc_code(failed), failed.message)
            raise

    async def GetStats(self, request: Any, context: grpc.aio.ServicerContext) -> pb.Stats:
        return self.runner.stats()


async def _parsed(request: Any, context: grpc.aio.ServicerContext) -> None:
    """Aborts a call whose message protobuf could not parse (INVALID_ARGUMENT, not grpc's INTERNAL)."""
    if isinstance(request, UndecodableRequest):
        await context.abort(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"cannot parse the {request.message_type} message ({request.reason}); string fields "
            "must be valid UTF-8",
        )


async def _streamed(
    chunks: AsyncGenerator[Any, None], context: grpc.aio.ServicerContext
) -> AsyncGenerator[Any, None]:
    """The runner's chunks, and its failure as the call's status."""
    sent = False
    try:
        async with contextlib.aclosing(chunks):  # closing this stream stops the request at once
            async for chunk in chunks:
                sent = True
                yield chunk
    except CallFailed as failed:
        if not sent:
            await context.abort(grpc_code(failed), failed.message)
        context.set_code(grpc_code(failed))
        context.set_details(failed.message)
