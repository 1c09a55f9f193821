"""Bad input on the HTTP face (OpenAI and /infill): every refusal is an OpenAI error object with the
exact status and a message naming the field; oversize bodies get 413, slow senders 408 or a closed
connection; the daemon keeps serving. The rows of docs/bad-input.md."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest

from inference.http.face import HttpFace
from inference.server.address import DaemonAddress
from tests.inference.faced_daemon import FacedDaemon

PROMPT = "def add(a, b):\n    return"

COMPLETIONS_CASES: dict[str, tuple[dict[str, Any], str]] = {
    "max_tokens -5": ({"max_tokens": -5}, "sampling.max_tokens must be at least 1, got -5"),
    "max_tokens 0": ({"max_tokens": 0}, "sampling.max_tokens must be at least 1, got 0"),
    "max_tokens a string": ({"max_tokens": "5"}, "'max_tokens' must be an integer, got '5'"),
    "max_tokens a fraction": ({"max_tokens": 2.5}, "'max_tokens' must be an integer, got 2.5"),
    "top_p above 1": ({"top_p": 1.5}, "sampling.top_p must be in (0, 1], got 1.5"),
    "top_p negative": ({"top_p": -0.1}, "sampling.top_p must be in (0, 1], got -0.1"),
    "temperature negative": (
        {"temperature": -1},
        "sampling.temperature must be a finite number >= 0 (0 is greedy), got -1.0",
    ),
    "temperature a string": ({"temperature": "hot"}, "'temperature' must be a number, got 'hot'"),
    "n above 1": ({"n": 3}, "'n' must be 1: codedraft returns one choice per request"),
    "stop a number": ({"stop": 5}, "'stop' must be a string or a list of strings"),
    "stop of numbers": ({"stop": [1, 2]}, "'stop' must be a string or a list of strings"),
    "too many stops": (
        {"stop": [f"s{i}" for i in range(17)]},
        "sampling.stop has 17 strings; at most 16 are allowed",
    ),
    "seed negative": ({"seed": -1}, "'seed' must be at least 0, got -1"),
    "seed above uint64": (
        {"seed": 2**70},
        "'seed' must be at most 18446744073709551615, got 1180591620717411303424",
    ),
    "stream a string": ({"stream": "no"}, "'stream' must be true or false, got 'no'"),
    "stream_options a number": ({"stream_options": 5}, "'stream_options' must be an object, got 5"),
    "suffix a number": ({"suffix": 5}, "'suffix' must be a string, got 5"),
    "echo": ({"echo": True}, "'echo' is not supported"),
    "prompt a number": (
        {"prompt": 5},
        "'prompt' must be a string, or a list of token ids (one prompt per request)",
    ),
    "user too long": ({"user": "u" * 300}, "session_id is 300 characters; at most 128 are allowed"),
}


async def _post(session: aiohttp.ClientSession, url: str, **kwargs: Any) -> tuple[int, Any]:
    async with session.post(url, **kwargs) as reply:
        return reply.status, await reply.json()


def _error(status: int, message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": status}}


@pytest.mark.parametrize("case", sorted(COMPLETIONS_CASES))
async def test_a_bad_field_is_400_naming_it(faced: FacedDaemon, case: str) -> None:
    fields, message = COMPLETIONS_CASES[case]
    async with aiohttp.ClientSession() as session:
        status, body = await _post(
            session, f"{faced.base_url}/completions", json={"prompt": PROMPT, **fields}
        )
    assert (status, body) == (400, _error(400, message))
    stats = await faced.client.stats()
    assert stats.requests_active == 0 and stats.kv_blocks_used == 0


async def test_bodies_that_are_no_json_object(faced: FacedDaemon) -> None:
    url = f"{faced.base_url}/completions"
    async with aiohttp.ClientSession() as session:
        assert await _post(session, url, data=b'{"prompt": "x"') == (
            400,
            _error(400, "the body is not JSON: Expecting ',' delimiter: line 1 column 15 (char 14)"),
        )
        assert await _post(session, url, data=b"\xff\xfe{}") == (
            400,
            _error(
                400,
                "the body is not JSON: 'utf-8' codec can't decode byte 0xff in position 0: "
                "invalid start byte",
            ),
        )
        assert await _post(session, url, json=[1]) == (400, _error(400, "the body must be a JSON object"))
        chat = f"{faced.base_url}/chat/completions"
        assert await _post(session, chat, json={"messages": [{"role": "user", "content": 5}]}) == (
            400,
            _error(400, "messages[0].content must be a string or a list of text parts"),
        )
        infill = faced.base_url.removesuffix("/v1") + "/infill"
        assert await _post(session, infill, json={"input_prefix": "x", "input_extra": [5]}) == (
            400,
            _error(400, "input_extra[0] must be an object with a string 'text'"),
        )
    assert (await faced.client.stats()).requests_total == 0


async def test_a_huge_max_tokens_is_lowered_to_the_daemons_limit(faced: FacedDaemon) -> None:
    async with aiohttp.ClientSession() as session:
        status, body = await _post(
            session, f"{faced.base_url}/completions", json={"prompt": PROMPT, "max_tokens": 10**30}
        )
    assert status == 200
    assert 1 <= body["usage"]["completion_tokens"] <= 256  # the faced daemon's --max-new-tokens


async def test_oversize_bodies_unknown_routes_and_methods_are_openai_errors(faced: FacedDaemon) -> None:
    base = faced.base_url.removesuffix("/v1")
    async with aiohttp.ClientSession() as session:
        huge = b'{"prompt": "' + b"x" * (2 * 1024 * 1024) + b'"}'
        assert await _post(session, f"{base}/v1/completions", data=huge) == (
            413,
            _error(413, "the request body is larger than 1048576 bytes (the daemon's --max-request-mb)"),
        )
        assert await _post(session, f"{base}/v1/embeddings", json={}) == (
            404,
            _error(
                404,
                "nothing is served at /v1/embeddings: the daemon serves /v1/completions, "
                "/v1/chat/completions, /infill",
                "not_found_error",
            ),
        )
        async with session.get(f"{base}/v1/completions") as reply:
            assert (reply.status, await reply.json()) == (
                405,
                _error(405, "GET is not allowed on /v1/completions"),
            )
        status, body = await _post(
            session, f"{base}/v1/completions", json={"prompt": PROMPT, "max_tokens": 3}
        )
    assert status == 200 and body["usage"]["completion_tokens"] == 3


async def test_slow_senders_are_cut_off_and_others_are_served_meanwhile(faced: FacedDaemon) -> None:
    face = HttpFace(
        faced.daemon.runner, DaemonAddress(host="127.0.0.1", port=0), read_timeout_s=1.0, idle_close_s=1.0
    )
    port = (await face.start()).port
    try:
        slow_reader, slow_writer = await asyncio.open_connection("127.0.0.1", port)
        slow_writer.write(
            b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"prompt": '
        )
        stalled_reader, stalled_writer = await asyncio.open_connection("127.0.0.1", port)
        stalled_writer.write(b"POST /v1/compl")
        async with aiohttp.ClientSession() as session:
            status, body = await _post(
                session, f"http://127.0.0.1:{port}/v1/completions", json={"prompt": PROMPT, "max_tokens": 3}
            )
        assert status == 200 and body["usage"]["completion_tokens"] == 3
        head = await asyncio.wait_for(slow_reader.read(4096), 10)
        assert head.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
        assert head.endswith(
            b'{"error": {"message": "the request body did not arrive within 1 s", '
            b'"type": "timeout_error", "code": 408}}'
        )
        # closed, unanswered (the waits only stop a hang: the 408's text says which limit ended it)
        assert await asyncio.wait_for(stalled_reader.read(4096), 10) == b""
        slow_writer.close()
        stalled_writer.close()
    finally:
        await face.stop()
    assert (await faced.client.stats()).requests_active == 0


async def test_prompt_token_ids_outside_the_vocabulary(faced: FacedDaemon) -> None:
    served = faced.daemon.runner.served
    assert served is not None
    vocab = served.tokenizer.vocab_size
    message = f"prompt token ids must be in [0, {vocab})"
    async with aiohttp.ClientSession() as session:
        for ids in ([-1], [vocab]):
            status, body = await _post(session, f"{faced.base_url}/completions", json={"prompt": ids})
            assert (status, body) == (400, _error(400, message))
        status, body = await _post(
            session, f"{faced.base_url}/completions", json={"prompt": [1, 2], "max_tokens": 2}
        )
    assert status == 200 and body["usage"]["completion_tokens"] == 2
