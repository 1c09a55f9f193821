"""An engine step that raises ends every request in flight with INTERNAL and the reason, frees their
KV blocks, and leaves the daemon serving: a model whose forward pass fails on one token shows it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.api.codedraft.v1 import inference_pb2_grpc as pb_grpc
from inference.client import InferenceClient
from tests.fixtures.failing_model import FailingModel
from tests.fixtures.tiny_models import special_token_id
from tests.inference.server.helpers import (
    LONG_PREFIX,
    LONG_TOKENS,
    RunningDaemon,
    start_daemon,
    stream_ending,
    wait_idle,
)

# Every chat prompt holds it (the ChatML template opens each turn with it); completions never do.
POISON = "<|im_start|>"
POISONED_CHAT = pb.GenerateRequest(
    request_id="poisoned",
    chat=pb.ChatMessages(messages=[pb.ChatMessage(role="user", content="hello")]),
    sampling=pb.SamplingParams(max_tokens=4),
)


@pytest.fixture
async def failing(tiny_model_dir: Path, short_dir: Path) -> AsyncIterator[RunningDaemon]:
    poison = special_token_id(POISON)
    daemon = await start_daemon(
        tiny_model_dir, short_dir, wrap_target=lambda model: FailingModel(model, poison)
    )
    yield daemon
    await daemon.client.close()
    await daemon.daemon.stop()


def _assert_reason(details: str) -> None:
    assert details.startswith("the engine failed while running this request (PoisonedTokenError: ")
    assert f"forward pass failed on token {special_token_id(POISON)}" in details
    assert "every request in flight was stopped" in details and "\n" not in details


async def test_a_failing_step_ends_every_live_request_with_internal_and_the_daemon_serves_on(
    failing: RunningDaemon,
) -> None:
    stub = pb_grpc.InferenceStub(failing.client._channel)
    bystander = stub.Complete(
        pb.CompleteRequest(
            request_id="bystander", prefix=LONG_PREFIX, sampling=pb.SamplingParams(max_tokens=LONG_TOKENS)
        )
    )
    async for chunk in bystander:  # running, with KV blocks, when the failure comes
        if chunk.text_delta:
            break
    (chunks, code, details), (_, poisoned_code, poisoned_details) = await asyncio.wait_for(
        asyncio.gather(stream_ending(bystander), stream_ending(stub.Generate(POISONED_CHAT))), 30
    )
    assert code == grpc.StatusCode.INTERNAL and poisoned_code == grpc.StatusCode.INTERNAL
    _assert_reason(details)
    _assert_reason(poisoned_details)
    assert chunks[-1].done and chunks[-1].finish_reason == pb.FINISH_REASON_ERROR
    assert chunks[-1].figures.generated_tokens < LONG_TOKENS

    stats = await wait_idle(failing)  # no KV block held, the engine's accounting checked
    assert stats.requests_finished == 2
    served = failing.daemon.runner.served
    assert served is not None
    assert served.backend.engine.target.model.failures == 1  # type: ignore[attr-defined]

    after = await InferenceClient.collect(
        failing.client.complete(
            pb.CompleteRequest(prefix="def f():\n    return ", sampling=pb.SamplingParams(max_tokens=3))
        )
    )
    assert after.finish_reason == pb.FINISH_REASON_LENGTH and after.figures.generated_tokens == 3
    again = await stream_ending(stub.Generate(POISONED_CHAT))
    assert again[1] == grpc.StatusCode.INTERNAL
    await wait_idle(failing)
