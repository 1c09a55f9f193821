"""Cancel-previous, Cancel, a client that cancels or disappears, and deadlines: each stops the request,
ends its stream with the right status, and frees its KV blocks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.api.codedraft.v1 import inference_pb2_grpc as pb_grpc
from inference.client import InferenceClient
from tests.inference.server.helpers import RunningDaemon, run_past_a_deadline, stream_ending, wait_idle

LONG = pb.SamplingParams(max_tokens=250)
# A long completion's text starts at the tiny model's 101st forward pass and the request ends after 248
# (speculation verifies several tokens in some): armed for this many passes, the engine holds it in
# between, with text sent, until the test stops it (`tests/fixtures/held_model.py`). Without the hold
# the test's stop raced the model's last token.
FREE_PASSES = 150


def _long_completion(request_id: str, session_id: str = "") -> pb.CompleteRequest:
    return pb.CompleteRequest(
        request_id=request_id,
        session_id=session_id,
        prefix="class Stack:\n    def push(self, item):\n",
        sampling=LONG,
    )


async def _first_chunk(call: AsyncIterator[pb.CompleteChunk]) -> pb.CompleteChunk:
    async for chunk in call:
        if chunk.text_delta:
            return chunk
    raise AssertionError("the stream ended before any text")


async def test_a_newer_completion_of_the_session_supersedes_the_older(running: RunningDaemon) -> None:
    stub = pb_grpc.InferenceStub(running.client._channel)
    running.arm(FREE_PASSES)
    older = stub.Complete(_long_completion("old", session_id="doc-1"))
    await _first_chunk(older)
    newer = await InferenceClient.collect(
        running.client.complete(
            pb.CompleteRequest(
                request_id="new", session_id="doc-1", prefix="x = ", sampling=pb.SamplingParams(max_tokens=2)
            )
        )
    )
    chunks, code, details = await stream_ending(older)
    assert chunks[-1].done and chunks[-1].finish_reason == pb.FINISH_REASON_CANCELLED
    assert chunks[-1].figures.generated_tokens < 250
    assert code == grpc.StatusCode.CANCELLED
    assert details == "superseded by request new of the same session 'doc-1'"
    assert newer.finish_reason == pb.FINISH_REASON_LENGTH and newer.figures.generated_tokens == 2
    stats = await wait_idle(running)
    assert stats.requests_cancelled == 1


async def test_two_completions_sent_back_to_back_keep_the_one_that_arrived_last(
    running: RunningDaemon,
) -> None:
    """Calls sent together reach the daemon in either order; the later arrival stops the earlier."""
    stub = pb_grpc.InferenceStub(running.client._channel)
    running.arm(FREE_PASSES)  # the first to arrive cannot end before the second stops it
    calls = {
        "first": stub.Complete(_long_completion("first", session_id="doc-1")),
        "second": stub.Complete(_long_completion("second", session_id="doc-1")),
    }
    ends = dict(
        zip(calls, await asyncio.gather(*(stream_ending(call) for call in calls.values())), strict=True)
    )
    stopped = [name for name, (_, code, _) in ends.items() if code == grpc.StatusCode.CANCELLED]
    assert len(stopped) == 1, ends
    (kept,) = set(calls) - set(stopped)
    chunks, code, details = ends[stopped[0]]
    assert details == f"superseded by request {kept} of the same session 'doc-1'"
    assert chunks[-1].done and chunks[-1].finish_reason == pb.FINISH_REASON_CANCELLED
    chunks, code, _ = ends[kept]
    assert code == grpc.StatusCode.OK and chunks[-1].figures.generated_tokens > 0
    await wait_idle(running)


async def test_other_sessions_and_generations_are_not_superseded(running: RunningDaemon) -> None:
    stub = pb_grpc.InferenceStub(running.client._channel)
    running.arm(FREE_PASSES)  # the other requests still run: a pass of several is never held
    first = stub.Complete(_long_completion("a", session_id="doc-1"))
    await _first_chunk(first)
    await InferenceClient.collect(
        running.client.complete(
            pb.CompleteRequest(session_id="doc-2", prefix="y = ", sampling=pb.SamplingParams(max_tokens=2))
        )
    )
    await InferenceClient.collect(
        running.client.generate(
            pb.GenerateRequest(session_id="doc-1", prompt="z = ", sampling=pb.SamplingParams(max_tokens=2))
        )
    )
    assert await running.client.cancel("a")
    chunks, code, details = await stream_ending(first)
    assert code == grpc.StatusCode.CANCELLED and details == "cancelled by a Cancel call"
    assert chunks[-1].finish_reason == pb.FINISH_REASON_CANCELLED
    await wait_idle(running)


async def test_cancel_stops_a_running_request(running: RunningDaemon) -> None:
    running.arm(FREE_PASSES)
    stream = running.client.complete(_long_completion("victim"))
    seen = [await _first_chunk(stream)]
    assert await running.client.cancel("victim")
    async for chunk in stream:  # the client ends normally after the CANCELLED chunk
        seen.append(chunk)
    assert seen[-1].done and seen[-1].finish_reason == pb.FINISH_REASON_CANCELLED
    assert not await running.client.cancel("victim")
    assert not await running.client.cancel("never-existed")
    stats = await wait_idle(running)
    assert stats.requests_cancelled == 1 and stats.requests_finished == 1


@pytest.mark.parametrize("how", ["cancel the call", "leave the loop", "close the channel"])
async def test_a_client_that_goes_away_frees_its_request(running: RunningDaemon, how: str) -> None:
    other = InferenceClient(running.address)
    running.arm(FREE_PASSES)
    if how == "leave the loop":
        stream = other.complete(_long_completion("gone"))
        await _first_chunk(stream)
        await stream.aclose()  # type: ignore[attr-defined]
    else:
        call = pb_grpc.InferenceStub(other._channel).Complete(_long_completion("gone"))
        await _first_chunk(call)
        if how == "cancel the call":
            call.cancel()
    await other.close()
    stats = await wait_idle(running)
    assert stats.requests_finished == stats.requests_total
    assert stats.requests_cancelled == stats.requests_total
    after = await InferenceClient.collect(
        running.client.complete(pb.CompleteRequest(prefix="a", sampling=pb.SamplingParams(max_tokens=3)))
    )
    assert after.figures.generated_tokens > 0


async def test_a_deadline_ends_the_call_and_frees_the_request(endless: RunningDaemon) -> None:
    endless_request = pb.CompleteRequest(
        request_id="slow", prefix="def f():\n    ", sampling=pb.SamplingParams(max_tokens=6000)
    )

    async def call(deadline: float) -> object:
        return await InferenceClient.collect(endless.client.complete(endless_request, timeout=deadline))

    # The engine holds the request after its prompt until it is stopped: only the deadline ends it.
    await run_past_a_deadline(endless, 1, call, endless)
    stats = await wait_idle(endless)
    assert stats.requests_cancelled == stats.requests_total >= 1
    assert stats.generated_tokens < 6000
