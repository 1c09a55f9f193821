"""Bad input gets INVALID_ARGUMENT (or gRPC's size status) naming the problem; the daemon stays up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import DaemonError, InferenceClient
from inference.config import EngineConfig
from tests.inference.server.helpers import RunningDaemon, start_daemon

GOOD = pb.CompleteRequest(prefix="def f():\n    return ", sampling=pb.SamplingParams(max_tokens=3))


def _complete(**changes: Any) -> pb.CompleteRequest:
    """GOOD with some fields replaced (a replaced `sampling` replaces the whole message)."""
    request = pb.CompleteRequest()
    request.CopyFrom(GOOD)
    if "sampling" in changes:
        request.sampling.CopyFrom(changes.pop("sampling"))
    request.snippets.extend(changes.pop("snippets", []))
    for name, value in changes.items():
        setattr(request, name, value)
    return request


COMPLETE_CASES = {
    "empty prompt": (_complete(prefix="", suffix=""), "prefix and suffix are both empty"),
    "max tokens 0": (
        _complete(sampling=pb.SamplingParams(max_tokens=0)),
        "sampling.max_tokens must be at least 1, got 0",
    ),
    "negative temperature": (
        _complete(sampling=pb.SamplingParams(temperature=-0.5)),
        "sampling.temperature must be a finite number >= 0",
    ),
    "nan temperature": (
        _complete(sampling=pb.SamplingParams(temperature=float("nan"))),
        "sampling.temperature",
    ),
    "top_p above 1": (_complete(sampling=pb.SamplingParams(top_p=1.5)), "sampling.top_p must be in (0, 1]"),
    "top_p negative": (_complete(sampling=pb.SamplingParams(top_p=-0.1)), "sampling.top_p must be in (0, 1]"),
    "unknown speculation": (_complete(speculation=42), "unknown speculation mode 42"),
    "draft without draft model": (
        _complete(speculation=pb.SPECULATION_MODE_DRAFT),
        "this daemon has no draft model",
    ),
    "unknown truncation": (_complete(truncation=9), "unknown truncation policy 9"),
    "too many stops": (
        _complete(sampling=pb.SamplingParams(stop=[f"s{i}" for i in range(17)])),
        "sampling.stop has 17 strings",
    ),
    "empty stop": (
        _complete(sampling=pb.SamplingParams(stop=[""])),
        "sampling.stop contains an empty string",
    ),
    "long request id": (_complete(request_id="r" * 200), "request_id is 200 characters"),
    "infinite snippet score": (
        _complete(snippets=[pb.ContextSnippet(path="a.py", text="x", score=float("inf"))]),
        "snippets[0].score",
    ),
    "max tokens at the limit": (
        _complete(sampling=pb.SamplingParams(max_tokens=256, stop=["x"])),
        None,  # valid: 256 of the context's 512 leaves room for the prompt
    ),
    "max tokens huge": (
        _complete(sampling=pb.SamplingParams(max_tokens=10**9, stop=["x"])),
        None,  # valid: lowered to the daemon's limit (tests/.../test_reply_length.py checks the figures)
    ),
}

GENERATE_CASES = {
    "no input": (pb.GenerateRequest(), "neither chat nor prompt"),
    "empty raw prompt": (pb.GenerateRequest(prompt=""), "prompt is empty"),
    "no messages": (pb.GenerateRequest(chat=pb.ChatMessages()), "chat has no messages"),
    "unknown role": (
        pb.GenerateRequest(chat=pb.ChatMessages(messages=[pb.ChatMessage(role="robot", content="hi")])),
        "chat.messages[0].role is 'robot'",
    ),
    "empty messages": (
        pb.GenerateRequest(chat=pb.ChatMessages(messages=[pb.ChatMessage(role="user", content="")])),
        "every chat message is empty",
    ),
}


PREDICT_REGION = "    return x\n"


def _predict(**fields: Any) -> pb.PredictEditRequest:
    values: dict[str, Any] = {"path": "a.py", "region": PREDICT_REGION, "cursor": 4}
    values.update(fields)
    return pb.PredictEditRequest(**values)


PREDICT_EDIT_CASES = {
    "cursor past the region": (_predict(cursor=99), "cursor is 99 but the region has only 13 characters"),
    "max tokens 0": (
        _predict(sampling=pb.SamplingParams(max_tokens=0)),
        "sampling.max_tokens must be at least 1, got 0",
    ),
    "top_p above 1": (
        _predict(sampling=pb.SamplingParams(top_p=1.5)),
        "sampling.top_p must be in (0, 1], got 1.5",
    ),
    "negative temperature": (
        _predict(sampling=pb.SamplingParams(temperature=-2)),
        "sampling.temperature must be a finite number >= 0 (0 is greedy), got -2.0",
    ),
    "unknown speculation": (_predict(speculation=42), "unknown speculation mode 42"),
    "long session id": (
        _predict(session_id="s" * 129),
        "session_id is 129 characters; at most 128 are allowed",
    ),
    "nan snippet score": (
        _predict(snippets=[pb.ContextSnippet(path="b.py", text="y", score=float("nan"))]),
        "snippets[0].score must be a finite number, got nan",
    ),
}


async def _status_of(stream: object) -> tuple[grpc.StatusCode | None, str]:
    try:
        await InferenceClient.collect(stream)  # type: ignore[arg-type]
    except DaemonError as error:
        return error.code, error.message
    return None, ""


@pytest.mark.parametrize("case", sorted(COMPLETE_CASES))
async def test_bad_complete_requests(running: RunningDaemon, case: str) -> None:
    request, message = COMPLETE_CASES[case]
    code, details = await _status_of(running.client.complete(request))
    if message is None:
        assert code is None
    else:
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert message in details
    assert (await InferenceClient.collect(running.client.complete(GOOD))).figures.generated_tokens == 3


@pytest.mark.parametrize("case", sorted(GENERATE_CASES))
async def test_bad_generate_requests(running: RunningDaemon, case: str) -> None:
    request, message = GENERATE_CASES[case]
    code, details = await _status_of(running.client.generate(request))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert message in details


@pytest.mark.parametrize("case", sorted(PREDICT_EDIT_CASES))
async def test_bad_predict_edit_requests(running: RunningDaemon, case: str) -> None:
    request, message = PREDICT_EDIT_CASES[case]
    with pytest.raises(DaemonError) as refused:
        await running.client.predict_edit(request, 30.0)
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert message in refused.value.message
    assert (await InferenceClient.collect(running.client.complete(GOOD))).figures.generated_tokens == 3


@pytest.mark.parametrize("case", ["empty prompt", "top_p above 1", "unknown speculation"])
async def test_bad_prefill_requests(running: RunningDaemon, case: str) -> None:
    request, message = COMPLETE_CASES[case]
    with pytest.raises(DaemonError) as refused:
        await running.client.prefill(request, 30.0)
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert message is not None and message in refused.value.message
    assert (await InferenceClient.collect(running.client.complete(GOOD))).figures.generated_tokens == 3


async def test_invalid_utf8_and_oversize_messages(running: RunningDaemon) -> None:
    channel = grpc.aio.insecure_channel(running.address.grpc_target())
    try:
        complete = channel.unary_stream(
            "/codedraft.v1.Inference/Complete",
            request_serializer=lambda raw: raw,
            response_deserializer=pb.CompleteChunk.FromString,
        )
        bad_utf8 = bytes([0x1A, 3, ord("a"), 0xFF, 0xFE])  # field 3 (prefix): "a" then invalid bytes
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            async for _ in complete(bad_utf8):
                pass
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "valid UTF-8" in (caught.value.details() or "")

        huge = pb.CompleteRequest(prefix="x" * (2 * 1024 * 1024)).SerializeToString()
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            async for _ in complete(huge):
                pass
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "larger than max" in (caught.value.details() or "")
    finally:
        await channel.close()
    assert (await InferenceClient.collect(running.client.complete(GOOD))).figures.generated_tokens == 3
    stats = await running.client.stats()
    assert stats.kv_blocks_used == 0


async def test_a_prompt_larger_than_the_kv_pool_is_resource_exhausted(
    tiny_model_dir: Path, short_dir: Path
) -> None:
    small = await start_daemon(tiny_model_dir, short_dir, engine_config=EngineConfig(num_kv_blocks=4))
    try:
        big = pb.CompleteRequest(
            prefix="def f(x):\n    return x\n" * 12, sampling=pb.SamplingParams(max_tokens=2)
        )
        code, details = await _status_of(small.client.complete(big))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "does not fit the KV pool of 64 tokens (4 blocks of 16)" in details
        assert details.endswith("start the daemon with a larger --kv-tokens (or --kv-cache-mb)")
        ok = await InferenceClient.collect(small.client.complete(GOOD))
        assert ok.figures.generated_tokens == 3
        assert (await small.client.stats()).kv_blocks_used == 0
    finally:
        await small.client.close()
        await small.daemon.stop()
