"""Reading one suggestion from the daemon's stream: its text, its figures, and whether it was
superseded; a suggestion whose block has ended is stopped in the daemon rather than read to the end.

A block that has ended is stopped with a Cancel, so that its stream still ends with the request's
figures (how sure the model was, which the confidence gate reads); the rest of the stream is read in
a task, briefly, while the suggestion is post-processed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.postprocess.context import CursorContext
from lsp_server.completion.postprocess.stop_at_block_end import stop_at_block_end
from lsp_server.daemon_supervisor import RequestRejected

CancelRequest = Callable[[str], Awaitable[bool]]
"""Asks the daemon to stop a request by id; True when it was still running (False: it had ended, or the
daemon could not be asked). The stream then ends with its final figures, read for a moment after."""

# After asking the daemon to stop a suggestion whose block has ended, how long to wait for the final
# chunk and its figures (one engine step) before closing the stream without them.
FINAL_CHUNK_WAIT_S = 0.5

FinalFigures = tuple[pb.RequestFigures | None, float]
"""The figures of a stream's last chunk (None when it did not come in time), and when it came."""


async def read_suggestion(
    stream: AsyncIterator[pb.CompleteChunk], context: CursorContext, cancel: CancelRequest | None
) -> tuple[str, pb.RequestFigures | None, bool, asyncio.Task[FinalFigures] | None]:
    """The streamed text, the daemon's figures, whether the daemon stopped the request before its
    suggestion was complete (a newer request of the document superseded it), and, when the
    suggestion's block ended first, the task that reads the rest. The stream is closed on return,
    or by that task."""
    text = ""
    handed_over = False
    try:
        async for chunk in stream:
            text += chunk.text_delta
            if chunk.done:
                return text, chunk.figures, chunk.finish_reason == pb.FINISH_REASON_CANCELLED, None
            if text.count("\n") >= 2 and stop_at_block_end(context, text) != text:
                if cancel is None:
                    break
                # Stopped now, or already ended (the daemon wrote its last token before the Cancel
                # came): either way the stream's last chunk, with the figures, is on its way.
                await cancel(chunk.request_id)
                handed_over = True
                return text, None, False, asyncio.ensure_future(_final_figures(stream))
    finally:
        if not handed_over:
            await stream.aclose()  # type: ignore[attr-defined]
    return text, None, False, None


async def _final_figures(stream: AsyncIterator[pb.CompleteChunk]) -> FinalFigures:
    """Reads a stopped stream to its last chunk, for at most ``FINAL_CHUNK_WAIT_S``, then closes it."""
    figures = None
    try:
        async with asyncio.timeout(FINAL_CHUNK_WAIT_S):
            async for chunk in stream:
                if chunk.done:
                    figures = chunk.figures
                    break
    except (TimeoutError, ConnectionError, RequestRejected):
        pass  # the suggestion is complete; only its figures are missing
    finally:
        await stream.aclose()  # type: ignore[attr-defined]
    return figures, time.monotonic()
