"""Two models in one daemon, routed by task: which model computes each call, GetModelInfo's routes,
per-model stats, and cancel-previous, Cancel and drain across the two engines.

The two models are scripted (`completer_dir`, `chatter_dir` in tests/inference/conftest.py), so each
call's text says which model wrote it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.api.codedraft.v1 import inference_pb2_grpc as pb_grpc
from inference.backends.local_engine import EngineBackend
from inference.client import InferenceClient
from inference.config import EngineConfig
from tests.fixtures.scripted_model import CHAT_SCRIPT
from tests.fixtures.waiting import wait_until
from tests.inference.conftest import COMPLETION_MODEL_CHAT, COMPLETION_TEXT
from tests.inference.server.helpers import RunningDaemon, start_daemon, stream_ending

TIMEOUT = 60.0
POOL = EngineConfig(num_kv_blocks=64)


@pytest.fixture
async def routed(completer_dir: Path, chatter_dir: Path, short_dir: Path) -> AsyncIterator[RunningDaemon]:
    """A daemon serving the completer for completions and the chatter for chat tasks."""
    daemon = await start_daemon(completer_dir, short_dir, chat_dir=chatter_dir, engine_config=POOL)
    yield daemon
    await daemon.client.close()
    await daemon.daemon.stop()


def _complete(request_id: str, session_id: str, max_tokens: int) -> pb.CompleteRequest:
    return pb.CompleteRequest(
        request_id=request_id,
        session_id=session_id,
        prefix="def total(items):\n    ",
        sampling=pb.SamplingParams(max_tokens=max_tokens),
        token_healing=False,  # the reply is then the script from its first token
    )


def _chat(request_id: str, session_id: str, max_tokens: int) -> pb.GenerateRequest:
    request = pb.GenerateRequest(
        request_id=request_id, session_id=session_id, sampling=pb.SamplingParams(max_tokens=max_tokens)
    )
    request.chat.messages.add(role="user", content="Rename the variable.")
    return request


def _per_model(stats: pb.Stats) -> dict[str, tuple[str, int, int]]:
    """Each model's (name, requests received, requests finished), by role."""
    return {
        entry.served_by: (entry.model_name, entry.stats.requests_total, entry.stats.requests_finished)
        for entry in stats.models
    }


async def _idle(running: RunningDaemon) -> pb.Stats:
    """Stats once nothing is live and neither engine holds a KV block; both engines' books checked."""

    async def idle() -> pb.Stats | None:
        stats = await running.client.stats()
        return stats if stats.requests_active == stats.kv_blocks_used == stats.queue_depth == 0 else None

    stats = await wait_until(idle, 10.0, "both engines idle", interval_s=0.05)
    models = running.daemon.runner.models
    assert models is not None
    for _, served in models.roles():
        assert isinstance(served.backend, EngineBackend)
        served.backend.engine.check_invariants()
    return stats


async def test_model_info_names_the_model_of_each_task(routed: RunningDaemon) -> None:
    info = await routed.client.model_info()
    assert (info.model.name, info.chat_model.model.name) == ("completer", "chatter")
    assert info.next_edit_format == info.chat_model.next_edit_format == "chat"
    assert not info.chat_model.HasField("chat_model") and not info.chat_model.routes
    assert [(r.task, r.served_by, r.model_name) for r in info.routes] == [
        ("complete", "completion", "completer"),
        ("predict_edit", "chat", "chatter"),
        ("generate_chat", "chat", "chatter"),
        ("generate_prompt", "completion", "completer"),
    ]
    assert info.max_request_bytes == info.chat_model.max_request_bytes == 1024 * 1024


async def test_each_task_is_computed_by_its_model(routed: RunningDaemon) -> None:
    client = routed.client
    completed = await InferenceClient.collect(client.complete(_complete("c", "doc", 5)))
    assert completed.text == COMPLETION_TEXT
    assert _per_model(await _idle(routed)) == {"completion": ("completer", 1, 1), "chat": ("chatter", 0, 0)}

    chatted = await InferenceClient.collect(client.generate(_chat("g", "doc", 3)))
    assert CHAT_SCRIPT.startswith(chatted.text) and chatted.text.startswith("value")
    edit = pb.PredictEditRequest(path="a.py", region="    return x\n", cursor=4, session_id="doc")
    edit.sampling.max_tokens = 4
    await client.predict_edit(edit, TIMEOUT)
    assert _per_model(await _idle(routed)) == {"completion": ("completer", 1, 1), "chat": ("chatter", 2, 2)}

    raw = pb.GenerateRequest(request_id="p", prompt="<|fim_prefix|><|fim_suffix|><|fim_middle|>")
    raw.sampling.max_tokens = 5
    assert (await InferenceClient.collect(client.generate(raw))).text == COMPLETION_TEXT
    stats = await _idle(routed)
    assert _per_model(stats) == {"completion": ("completer", 2, 2), "chat": ("chatter", 2, 2)}
    assert (stats.requests_total, stats.requests_finished) == (4, 4)
    assert stats.generated_tokens == sum(entry.stats.generated_tokens for entry in stats.models)
    assert stats.kv_blocks_total == sum(entry.stats.kv_blocks_total for entry in stats.models) == 128


async def test_one_model_serves_every_task_as_before(completer_dir: Path, short_dir: Path) -> None:
    running = await start_daemon(completer_dir, short_dir, engine_config=POOL)
    try:
        info = await running.client.model_info()
        assert not info.HasField("chat_model")
        assert {(r.served_by, r.model_name) for r in info.routes} == {("completion", "completer")}
        chatted = await InferenceClient.collect(running.client.generate(_chat("g", "doc", 4)))
        assert chatted.text == COMPLETION_MODEL_CHAT
        stats = await running.client.stats()
        assert not stats.models and stats.requests_total == 1
    finally:
        await running.client.close()
        await running.daemon.stop()


async def test_cancel_previous_and_cancel_reach_the_engine_that_runs_the_call(routed: RunningDaemon) -> None:
    stub = pb_grpc.InferenceStub(routed.client._channel)
    endless_completion = stub.Complete(_complete("old", "doc", 250))
    endless_chat = stub.Generate(_chat("chat", "doc", 250))

    async def both_running() -> bool:
        stats = await routed.client.stats()
        return [entry.stats.requests_active for entry in stats.models] == [1, 1] and all(
            entry.stats.kv_blocks_used for entry in stats.models
        )

    await wait_until(both_running, 10.0, "both calls running")
    # A completion of the session supersedes the older completion only, not the session's generation.
    newer = await InferenceClient.collect(routed.client.complete(_complete("new", "doc", 5)))
    assert newer.text == COMPLETION_TEXT
    chunks, code, details = await stream_ending(endless_completion)
    assert (code, details) == (
        grpc.StatusCode.CANCELLED,
        "superseded by request new of the same session 'doc'",
    )
    assert chunks[-1].finish_reason == pb.FINISH_REASON_CANCELLED
    assert _per_model(await routed.client.stats())["chat"][1:] == (1, 0)  # still running

    assert await routed.client.cancel("chat")
    chunks, code, details = await stream_ending(endless_chat)
    assert (code, details) == (grpc.StatusCode.CANCELLED, "cancelled by a Cancel call")
    assert chunks[-1].finish_reason == pb.FINISH_REASON_CANCELLED
    assert chunks[-1].figures.generated_tokens < 250
    stats = await _idle(routed)
    assert stats.requests_cancelled == 2
    assert [entry.stats.requests_cancelled for entry in stats.models] == [1, 1]


async def test_drain_stops_the_calls_of_both_engines(routed: RunningDaemon) -> None:
    stub = pb_grpc.InferenceStub(routed.client._channel)
    calls = [stub.Complete(_complete("c", "doc", 250)), stub.Generate(_chat("g", "doc", 250))]

    async def both_running() -> bool:
        stats = await routed.client.stats()
        return [entry.stats.requests_active for entry in stats.models] == [1, 1]

    await wait_until(both_running, 10.0, "both calls running")
    assert await routed.daemon.runner.drain(0.0, "test") == 2
    for call in calls:
        _, code, details = await stream_ending(call)
        assert code == grpc.StatusCode.UNAVAILABLE and details.startswith(
            "the daemon is shutting down (test)"
        )
