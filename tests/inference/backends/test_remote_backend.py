"""`codedraft daemon --backend openai:URL`: a daemon that serves from a remote OpenAI-compatible engine.

The remote engine here is a second real codedraft daemon's HTTP face on the tiny model (llama.cpp's
server is driven by the end-to-end test): the front daemon builds the prompt, the engine decodes it,
and the front daemon's gRPC clients see the same text as the engine's own gRPC calls give.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import grpc
import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.model_facts import CODE_SAMPLE
from inference.backends.openai_remote import OpenAIRemoteBackend
from inference.backends.openai_stream import OpenAIEndpoint, RemoteEngineError
from inference.backends.remote_model import RemoteSettings
from inference.call_status import Failure
from inference.client import DaemonError, InferenceClient
from inference.config import SamplingParams
from inference.engine.sequence import FinishReason, Request
from inference.loading import ModelLoadError
from inference.tokenizer import Tokenizer
from tests.fixtures.scripted_model import make_scripted_checkpoint
from tests.fixtures.tiny_gguf import write_gguf
from tests.inference.faced_daemon import FacedDaemon, start_faced_daemon, start_remote_daemon
from tests.inference.server.helpers import RunningDaemon, close_daemon, run_past_a_deadline, wait_idle

COMPLETION = pb.CompleteRequest(
    prefix="def area(width, height):\n    ",
    suffix="\n\nprint(area(2, 3))\n",
    path="geometry.py",
    snippets=[pb.ContextSnippet(path="units.py", text="SCALE = 2\n")],
    sampling=pb.SamplingParams(max_tokens=10),
)


def _settings(engine: FacedDaemon, tokenizer: Path, **changes: object) -> RemoteSettings:
    values: dict = {"base_url": engine.base_url, "model": "tiny-base", "tokenizer_path": tokenizer}
    values.update(changes)
    return RemoteSettings(**values)


async def _close(front: RunningDaemon) -> None:
    await close_daemon(front)


@pytest.mark.parametrize("prompt_format", ["text", "tokens"])
async def test_a_completion_through_the_remote_engine_equals_the_engines_own(
    faced: FacedDaemon, tiny_model_dir: Path, short_dir: Path, prompt_format: str
) -> None:
    front = await start_remote_daemon(
        _settings(faced, tiny_model_dir, prompt_format=prompt_format), short_dir
    )
    try:
        expected = await InferenceClient.collect(faced.client.complete(COMPLETION))
        first = await InferenceClient.collect(front.client.complete(COMPLETION))
        second = await InferenceClient.collect(front.client.complete(COMPLETION))
        info = await front.client.model_info()
    finally:
        await _close(front)
    assert first.text == second.text == expected.text != ""
    assert first.finish_reason == pb.FINISH_REASON_LENGTH
    # Figures come from the engine's usage: the same prompt, and the KV its earlier calls left behind.
    assert first.figures.prompt_tokens == expected.figures.prompt_tokens
    assert first.figures.generated_tokens == 10
    assert second.figures.reused_tokens == expected.figures.prompt_tokens - 1 > 0
    assert second.figures.computed_tokens == second.figures.prompt_tokens - second.figures.reused_tokens
    assert info.model.name == "tiny-base" and info.device == f"remote:{faced.base_url}"
    assert info.fim_template == "codedraft" and info.model.context_length == 512
    # the same limits and token rate as the engine serving the same model would report
    assert (info.default_completion_tokens, info.reply_reserve_limit) == (128, 256)
    tokenizer = Tokenizer.from_dir(tiny_model_dir)
    measured = len(CODE_SAMPLE) / len(tokenizer.encode(CODE_SAMPLE))
    assert info.chars_per_token == pb.ModelInfo(chars_per_token=measured).chars_per_token  # as float32


async def test_prefill_is_skipped_in_front_of_a_remote_engine(
    faced: FacedDaemon, tiny_model_dir: Path, short_dir: Path
) -> None:
    front = await start_remote_daemon(_settings(faced, tiny_model_dir), short_dir)
    try:
        reply = await front.client.prefill(COMPLETION)
    finally:
        await _close(front)
    # The engine could not pre-empt it for a completion: nothing reaches it.
    assert not reply.prefilled and "remote engine" in reply.skipped
    assert (await faced.client.stats()).requests_total == 0


async def test_the_tokenizer_may_come_from_the_engines_gguf_file(
    faced: FacedDaemon, tiny_model_dir: Path, short_dir: Path, tmp_path: Path
) -> None:
    # The file's tokenizer sends the same token ids the engine's own gives. (FIM detection differs: the
    # tiny model's folder names its FIM layout in a config key that a GGUF file does not carry.)
    gguf_file = tmp_path / "tiny-base.gguf"
    write_gguf(tiny_model_dir, gguf_file)
    front = await start_remote_daemon(_settings(faced, gguf_file, prompt_format="tokens"), short_dir)
    request = pb.GenerateRequest(
        prompt="def area(width, height):\n    ", sampling=pb.SamplingParams(max_tokens=8)
    )
    chat = pb.ChatMessages(messages=[pb.ChatMessage(role="user", content="Rename x to y in: x = 1")])
    chat_request = pb.GenerateRequest(chat=chat, sampling=pb.SamplingParams(max_tokens=8))
    try:
        expected = await InferenceClient.collect(faced.client.generate(request))
        got = await InferenceClient.collect(front.client.generate(request))
        expected_chat = await InferenceClient.collect(faced.client.generate(chat_request))
        got_chat = await InferenceClient.collect(front.client.generate(chat_request))
    finally:
        await _close(front)
    assert got.text == expected.text != ""
    assert got.figures.prompt_tokens == expected.figures.prompt_tokens
    assert got_chat.text == expected_chat.text != ""


async def test_a_tokenizer_that_is_neither_folder_nor_gguf_fails_the_start(
    faced: FacedDaemon, short_dir: Path, tmp_path: Path
) -> None:
    not_gguf = tmp_path / "tokenizer.gguf"
    not_gguf.write_text("not a GGUF file")
    with pytest.raises(ModelLoadError, match="--backend-tokenizer: cannot read GGUF file"):
        await start_remote_daemon(_settings(faced, not_gguf), short_dir)
    with pytest.raises(ModelLoadError, match=r"has no tokenizer\.json"):
        await start_remote_daemon(_settings(faced, tmp_path), short_dir)


async def test_a_chat_generation_goes_to_chat_completions(
    faced: FacedDaemon, tiny_model_dir: Path, short_dir: Path
) -> None:
    chat = pb.ChatMessages(messages=[pb.ChatMessage(role="user", content="Rename x to y in: x = 1")])
    request = pb.GenerateRequest(chat=chat, sampling=pb.SamplingParams(max_tokens=12))
    front = await start_remote_daemon(_settings(faced, tiny_model_dir), short_dir)
    try:
        expected = await InferenceClient.collect(faced.client.generate(request))
        got = await InferenceClient.collect(front.client.generate(request))
    finally:
        await _close(front)
    assert got.text == expected.text != ""
    assert got.figures.prompt_tokens == expected.figures.prompt_tokens


async def _first_text(call: object) -> None:
    async for chunk in call:  # type: ignore[attr-defined]
        if chunk.text_delta:
            return


# Forward passes the held engine runs freely (the prompt's, then one token or one verified run each):
# the endless model's text after "a" starts at its 129th token, so the stream has text by then, and the
# request cannot end by itself (5000 tokens) after them.
FREE_PASSES = 200


@pytest.mark.parametrize("how", ["cancel", "newer-request", "deadline", "client-gone"])
async def test_stopping_a_request_closes_the_engine_stream(
    endless_faced: FacedDaemon, endless_model_dir: Path, short_dir: Path, how: str
) -> None:
    # The engine's model is held after a few tokens until the engine is asked to stop the request, so
    # the request is running when the stop comes, on a fast machine as on a busy one.
    settings = _settings(endless_faced, endless_model_dir, model="endless", max_new_tokens=6000)
    front = await start_remote_daemon(settings, short_dir)
    long = pb.CompleteRequest(
        request_id="long", session_id="doc", prefix="a", sampling=pb.SamplingParams(max_tokens=5000)
    )
    try:
        if how == "deadline":

            async def call(deadline: float) -> object:
                return await InferenceClient.collect(front.client.complete(long, timeout=deadline))

            await run_past_a_deadline(front, FREE_PASSES, call, endless_faced)
        else:
            endless_faced.arm(FREE_PASSES)
            stream = front.client.complete(long)
            await _first_text(stream)
            assert (await endless_faced.client.stats()).requests_active == 1
            if how == "cancel":
                assert await front.client.cancel("long")
            elif how == "newer-request":
                newer = pb.CompleteRequest(
                    request_id="new", session_id="doc", prefix="b", sampling=pb.SamplingParams(max_tokens=2)
                )
                await InferenceClient.collect(front.client.complete(newer))
            if how == "client-gone":
                await stream.aclose()  # type: ignore[attr-defined]
            else:
                rest = await InferenceClient.collect(stream)
                assert rest.finish_reason == pb.FINISH_REASON_CANCELLED
        engine_stats = await wait_idle(endless_faced)
        # Every request the engine was given for "long" was stopped (a deadline tried again after one
        # that passed before the engine had it may leave a second), and none ran to its end.
        finished = engine_stats.requests_total - engine_stats.requests_cancelled
        assert finished == (1 if how == "newer-request" else 0)
        if how == "deadline":
            assert engine_stats.requests_cancelled >= 1
        else:
            assert engine_stats.requests_cancelled == 1
        assert engine_stats.generated_tokens < 5000
        assert (await front.client.stats()).requests_active == 0
    finally:
        await _close(front)


async def test_engine_errors_map_to_grpc_statuses(
    faced: FacedDaemon, tiny_model_dir: Path, short_dir: Path
) -> None:
    # A chat goes to the engine as its messages, which the engine fits to its context itself; JSON
    # escapes every quote, so this one passes the front's 1 MiB gRPC limit but not the engine's 1 MiB
    # body limit: the engine's 413 comes back as INVALID_ARGUMENT, naming it.
    front = await start_remote_daemon(_settings(faced, tiny_model_dir), short_dir)
    try:
        quotes = pb.ChatMessages(messages=[pb.ChatMessage(role="user", content='"' * 600_000)])
        too_big = pb.GenerateRequest(chat=quotes, sampling=pb.SamplingParams(max_tokens=2))
        with pytest.raises(DaemonError) as raised:
            await InferenceClient.collect(front.client.generate(too_big))
        assert raised.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert "HTTP 413" in raised.value.message
        await faced.face.stop()  # the engine goes away
        with pytest.raises(DaemonError) as raised:
            await InferenceClient.collect(front.client.complete(COMPLETION))
        assert raised.value.code == grpc.StatusCode.UNAVAILABLE
        assert f"cannot reach the engine at {faced.base_url}" in raised.value.message
    finally:
        await _close(front)


async def test_a_wrong_api_key_is_unauthenticated_and_never_logged(
    tiny_model_dir: Path, short_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    engine = await start_faced_daemon(tiny_model_dir, short_dir, token="engine-key-1234", name="engine")
    wrong = "wrong-key-98765"
    try:
        with pytest.raises(ModelLoadError, match="HTTP 401") as failed:
            await start_remote_daemon(_settings(engine, tiny_model_dir, api_key=wrong), short_dir)
        assert wrong not in str(failed.value)
        tokenizer = Tokenizer.from_dir(tiny_model_dir)
        backend = OpenAIRemoteBackend(OpenAIEndpoint(engine.base_url, wrong), "tiny-base", tokenizer)
        request = Request(
            "r1", prompt_token_ids=tokenizer.encode("x = "), sampling=SamplingParams(max_tokens=2)
        )
        with pytest.raises(RemoteEngineError) as raised:
            async for _ in backend.generate(request):
                pass
        await backend.close()
        assert raised.value.failure is Failure.UNAUTHENTICATED
        assert "wrong token" in str(raised.value) and wrong not in str(raised.value)
        front = await start_remote_daemon(
            _settings(engine, tiny_model_dir, api_key="engine-key-1234"), short_dir, name="front2"
        )
        try:
            result = await InferenceClient.collect(front.client.complete(COMPLETION))
            assert result.figures.generated_tokens == 10
        finally:
            await _close(front)
    finally:
        await engine.close()
    await asyncio.sleep(0)
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert logged  # the daemons did log
    assert wrong not in logged and "engine-key-1234" not in logged


async def test_an_unreachable_engine_fails_the_start_with_its_address(
    tiny_model_dir: Path, short_dir: Path
) -> None:
    settings = RemoteSettings(base_url="http://127.0.0.1:9/v1", model="m", tokenizer_path=tiny_model_dir)
    with pytest.raises(ModelLoadError, match=r"cannot reach the engine at http://127\.0\.0\.1:9/v1"):
        await start_remote_daemon(settings, short_dir)


async def test_a_text_rule_ends_the_remote_stream(tmp_path: Path, short_dir: Path) -> None:
    """A request's text rule (a rewrite re-joining its region) applies to a remote engine's stream as
    to the local engine's: the text is cut and completed where the rule says, and the stream to the
    engine is closed, so the engine stops decoding."""
    model = make_scripted_checkpoint(tmp_path / "lines", completion="return total\n    x", loop=True)
    engine = await start_faced_daemon(model, short_dir, max_new_tokens=4000)
    try:
        tokenizer = Tokenizer.from_dir(model)
        backend = OpenAIRemoteBackend(OpenAIEndpoint(engine.base_url, None), "lines", tokenizer)
        request = Request(
            "ruled",
            prompt_token_ids=tokenizer.encode("<|fim_middle|>"),
            sampling=SamplingParams(max_tokens=3000),
            text_rule=lambda text: (text.index("\n") + 1, "END"),
        )
        outputs = [output async for output in backend.generate(request)]
        await backend.close()
        assert "".join(output.delta for output in outputs) == "return total\nEND"
        assert outputs[-1].finish_reason is FinishReason.STOP
        stats = await wait_idle(engine)
        assert stats.generated_tokens < 3000
    finally:
        await engine.close()
