"""`codedraft daemon --backend openai:URL --http tcp:…` as a real subprocess: a daemon in front of a
remote engine serving both gRPC and the OpenAI API, with the engine's API key read from a file."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import openai
import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import InferenceClient
from tests.codedraft.test_daemon_and_complete import WatchedDaemon
from tests.inference.faced_daemon import start_faced_daemon

API_KEY = "engine-api-key-7c1e"


@pytest.mark.slow
async def test_a_front_daemon_serves_grpc_and_openai_from_a_remote_engine(
    tiny_model_dir: Path, short_dir: Path
) -> None:
    engine = await start_faced_daemon(tiny_model_dir, short_dir, token=API_KEY, name="engine")
    key_file = short_dir / "key"
    key_file.write_text(API_KEY + "\n")
    front_socket = short_dir / "front.sock"
    front = WatchedDaemon(
        "--backend",
        f"openai:{engine.base_url}",
        "--backend-model",
        "tiny-base",
        "--backend-tokenizer",
        str(tiny_model_dir),
        "--api-key-file",
        str(key_file),
        "--listen",
        f"unix:{front_socket}",
        "--http",
        "tcp:127.0.0.1:0",
    )
    try:
        await asyncio.to_thread(front.wait_ready)
        (http_line,) = [line for line in front.lines if line.startswith("OpenAI API and /infill on ")]
        match = re.fullmatch(r"OpenAI API and /infill on (http://127\.0\.0\.1:\d+/v1)", http_line)
        assert match, http_line
        request = pb.CompleteRequest(prefix="def add(a, b):\n    ", sampling=pb.SamplingParams(max_tokens=6))
        expected = (await InferenceClient.collect(engine.client.complete(request))).text
        async with InferenceClient(f"unix:{front_socket}") as client:
            through_front = (await InferenceClient.collect(client.complete(request))).text
            info = await client.model_info()
        assert through_front == expected
        assert info.device == f"remote:{engine.base_url}"
        async with openai.AsyncOpenAI(base_url=match.group(1), api_key="unused", max_retries=0) as face:
            reply = await face.completions.create(model="tiny-base", prompt="x = ", max_tokens=4)
        assert reply.usage is not None and reply.usage.completion_tokens == 4
    finally:
        status = await asyncio.to_thread(front.terminate)
        await engine.close()
    assert status == 0
    output = "\n".join(front.lines) + (front.process.stderr.read() if front.process.stderr else "")
    assert "ready: tiny-base" in output
    assert API_KEY not in output
