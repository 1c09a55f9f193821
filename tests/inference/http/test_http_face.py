"""The OpenAI face with the official `openai` client, and llama.cpp's /infill in llama.vscode's shape:
same output as the gRPC calls, usage figures, KV reuse, cancel by closing the stream, clear 400s."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import openai
import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import InferenceClient
from inference.http.face import HttpFace
from inference.server.address import DaemonAddress
from inference.server.listen import ListenError
from inference.server.request_runner import RequestRunner
from inference.tokenizer import Tokenizer
from tests.inference.faced_daemon import FacedDaemon, start_faced_daemon
from tests.inference.server.helpers import wait_idle

PROMPT = "def add(a, b):\n    return"


def _client(daemon: FacedDaemon, key: str = "unused") -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=daemon.base_url, api_key=key, max_retries=0)


async def _grpc_generate(daemon: FacedDaemon, request: pb.GenerateRequest) -> str:
    return (await InferenceClient.collect(daemon.client.generate(request))).text


async def test_models_lists_the_served_model(faced: FacedDaemon) -> None:
    async with _client(faced) as client:
        models = await client.models.list()
    assert [m.id for m in models.data] == ["tiny-base"]


async def test_completions_match_grpc_streamed_and_not(faced: FacedDaemon, tiny_model_dir: Path) -> None:
    expected = await _grpc_generate(
        faced, pb.GenerateRequest(prompt=PROMPT, sampling=pb.SamplingParams(max_tokens=12))
    )
    assert expected
    async with _client(faced) as client:
        whole = await client.completions.create(
            model="tiny-base", prompt=PROMPT, max_tokens=12, temperature=0
        )
        stream = await client.completions.create(
            model="tiny-base",
            prompt=PROMPT,
            max_tokens=12,
            stream=True,
            stream_options={"include_usage": True},
        )
        deltas, usages, finishes = [], [], []
        async for event in stream:
            deltas.extend(c.text for c in event.choices)
            finishes.extend(c.finish_reason for c in event.choices if c.finish_reason)
            if event.usage is not None:
                usages.append(event.usage)
    assert whole.choices[0].text == expected
    assert "".join(deltas) == expected
    assert whole.choices[0].finish_reason == finishes[-1] == "length"
    assert whole.usage is not None and whole.usage.completion_tokens == 12
    assert len(usages) == 1 and usages[0].completion_tokens == 12
    # The second identical prompt reuses the first's K/V, all but its last token.
    prompt_tokens = len(Tokenizer.from_dir(tiny_model_dir).encode(PROMPT))
    assert whole.usage.prompt_tokens == usages[0].prompt_tokens == prompt_tokens
    assert usages[0].prompt_tokens_details is not None
    assert usages[0].prompt_tokens_details.cached_tokens == usages[0].prompt_tokens - 1


async def test_completions_with_suffix_are_fill_in_the_middle(faced: FacedDaemon) -> None:
    request = pb.CompleteRequest(prefix="x = [1, 2", suffix="]\n", sampling=pb.SamplingParams(max_tokens=8))
    expected = (await InferenceClient.collect(faced.client.complete(request))).text
    async with _client(faced) as client:
        reply = await client.completions.create(model="m", prompt="x = [1, 2", suffix="]\n", max_tokens=8)
    assert reply.choices[0].text == expected


async def test_chat_completions_match_grpc(faced: FacedDaemon) -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Rename x to y."}]
    chat = pb.ChatMessages(messages=[pb.ChatMessage(**m) for m in messages])
    expected = await _grpc_generate(
        faced, pb.GenerateRequest(chat=chat, sampling=pb.SamplingParams(max_tokens=10))
    )
    async with _client(faced) as client:
        whole = await client.chat.completions.create(model="tiny-base", messages=messages, max_tokens=10)  # type: ignore[arg-type]
        stream = await client.chat.completions.create(
            model="tiny-base",
            messages=messages,
            max_tokens=10,
            stream=True,  # type: ignore[arg-type]
        )
        deltas = [c.delta.content or "" async for event in stream for c in event.choices]
    assert whole.choices[0].message.content == expected
    assert whole.choices[0].message.role == "assistant"
    assert "".join(deltas) == expected


async def test_closing_the_stream_aborts_the_request(endless_faced: FacedDaemon) -> None:
    # The engine holds the request after 200 passes (the endless model's text after "a" starts at its
    # 129th token) until it is stopped: it is still running when the stream is closed, however fast
    # the machine writes the endless model's tokens.
    endless_faced.arm(200)
    async with _client(endless_faced) as client:
        stream = await client.completions.create(model="m", prompt="a", max_tokens=5000, stream=True)
        received = 0
        async for event in stream:
            received += len(event.choices)
            if received >= 3:
                break
        assert (await endless_faced.client.stats()).requests_active == 1
        await stream.close()
    stats = await wait_idle(endless_faced)
    assert stats.requests_cancelled == 1
    assert stats.generated_tokens < 5000


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"n": 2}, "'n' must be 1"),
        ({"max_tokens": 0}, "sampling.max_tokens must be at least 1, got 0"),
        ({"max_tokens": -5}, "sampling.max_tokens must be at least 1, got -5"),
        ({"temperature": -1}, "sampling.temperature must be a finite number >= 0 (0 is greedy), got -1"),
        ({"top_p": 1.5}, "sampling.top_p must be in (0, 1], got 1.5"),
    ],
)
async def test_a_bad_request_gets_400_with_a_message(faced: FacedDaemon, body: dict, message: str) -> None:
    async with _client(faced) as client:
        with pytest.raises(openai.BadRequestError) as raised:
            await client.completions.create(model="m", prompt=PROMPT, **body)
    assert raised.value.status_code == 400
    assert message in raised.value.message
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{faced.base_url}/completions", data=b"{not json") as reply:
            assert reply.status == 400
            assert "not JSON" in (await reply.json())["error"]["message"]
    assert (await faced.client.stats()).requests_active == 0


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        (
            "/chat/completions",
            {"messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": -1},
            "sampling.max_tokens must be at least 1, got -1",
        ),
        (
            "/chat/completions",
            {"messages": [{"role": "user", "content": "hi"}], "top_p": 1.5},
            "sampling.top_p must be in (0, 1], got 1.5",
        ),
        (
            "/infill",
            {"input_prefix": "x = ", "n_predict": 0},
            "sampling.max_tokens must be at least 1, got 0",
        ),
        (
            "/infill",
            {"input_prefix": "x = ", "temperature": -0.5},
            "sampling.temperature must be a finite number >= 0 (0 is greedy), got -0.5",
        ),
    ],
)
async def test_every_face_rejects_bad_sampling_with_the_validators_message(
    faced: FacedDaemon, path: str, body: dict, message: str
) -> None:
    url = f"{faced.base_url}{path}" if path.startswith("/chat") else faced.base_url.removesuffix("/v1") + path
    async with aiohttp.ClientSession() as session:
        async with session.post(url, json=body) as reply:
            assert reply.status == 400
            assert await reply.json() == {
                "error": {"message": message, "type": "invalid_request_error", "code": 400}
            }
    assert (await faced.client.stats()).requests_total == 0


async def test_off_loopback_the_face_needs_tls_and_a_token() -> None:
    face = HttpFace(RequestRunner(), DaemonAddress(host="0.0.0.0", port=0), token="s3cret-token")
    with pytest.raises(ListenError, match=r"refusing to listen on tcp:0\.0\.0\.0:0 without TLS"):
        await face.start()
    face = HttpFace(RequestRunner(), DaemonAddress(host="0.0.0.0", port=0))
    with pytest.raises(ListenError, match="without --token-file"):
        await face.start()


def _llama_vscode_infill(stream: bool) -> dict:
    """A body as llama.vscode sends it (its fields, unknown ones included, which must be accepted)."""
    return {
        "id_slot": 0,
        "input_prefix": "import json\n\n\ndef load(path):\n",
        "input_suffix": "\n    return data\n",
        "input_extra": [
            {"filename": "util/io.py", "text": "def read_text(path):\n    return open(path).read()\n"}
        ],
        "prompt": "    with open(path) as f",
        "n_predict": 9,
        "n_indent": 4,
        "top_k": 40,
        "top_p": 0.99,
        "stream": stream,
        "samplers": ["top_k", "top_p", "infill"],
        "cache_prompt": True,
        "t_max_prompt_ms": 500,
        "t_max_predict_ms": 1000,
        "response_fields": ["content", "timings/prompt_n", "timings/predicted_n"],
    }


async def test_infill_in_llama_vscode_shape_matches_grpc_complete(faced: FacedDaemon) -> None:
    body = _llama_vscode_infill(stream=False)
    request = pb.CompleteRequest(
        prefix=body["input_prefix"] + body["prompt"],
        suffix=body["input_suffix"],
        snippets=[pb.ContextSnippet(path="util/io.py", text=body["input_extra"][0]["text"])],
        sampling=pb.SamplingParams(max_tokens=9, top_p=0.99),
    )
    expected = (await InferenceClient.collect(faced.client.complete(request))).text
    base = faced.base_url.removesuffix("/v1")
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{base}/infill", json=body) as reply:
            assert reply.status == 200
            whole = await reply.json()
        async with session.post(f"{base}/infill", json=_llama_vscode_infill(stream=True)) as reply:
            assert reply.headers["Content-Type"].startswith("text/event-stream")
            events = [
                json.loads(line[len(b"data: ") :])
                async for line in reply.content
                if line.startswith(b"data: ")
            ]
    assert whole["content"] == expected and whole["stop"] is True
    assert whole["tokens_predicted"] == 9 and whole["timings"]["predicted_n"] == 9
    # The gRPC call before it left the same prompt in the cache: all but its last token are reused.
    assert whole["tokens_cached"] == whole["tokens_evaluated"] - 1
    assert "".join(e["content"] for e in events) == expected
    assert [e["stop"] for e in events][-1] is True and not any(e["stop"] for e in events[:-1])


async def test_the_face_needs_the_token_when_the_daemon_has_one(
    tiny_model_dir: Path, short_dir: Path
) -> None:
    daemon = await start_faced_daemon(tiny_model_dir, short_dir, token="s3cret-token")
    try:
        async with _client(daemon, key="wrong") as client:
            with pytest.raises(openai.AuthenticationError, match="wrong token"):
                await client.models.list()
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{daemon.base_url}/models") as reply:
                assert reply.status == 401
                assert "needs a token" in (await reply.json())["error"]["message"]
        async with _client(daemon, key="s3cret-token") as client:
            reply = await client.completions.create(model="m", prompt=PROMPT, max_tokens=3)
        assert reply.usage is not None and reply.usage.completion_tokens == 3
    finally:
        await daemon.close()
