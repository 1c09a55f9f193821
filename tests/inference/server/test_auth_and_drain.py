"""Tokens on TCP, health while loading and serving, and draining on shutdown."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.local_model import ServeSettings, load_served_model
from inference.client import DaemonError, InferenceClient
from inference.config import EngineConfig
from inference.server.address import DaemonAddress
from inference.server.grpc_server import GrpcServer
from tests.fixtures.waiting import wait_until
from tests.inference.server.helpers import LONG_PREFIX, SMALL_POOL_BLOCKS, RunningDaemon, start_daemon

SHORT = pb.CompleteRequest(prefix="def f():\n    return ", sampling=pb.SamplingParams(max_tokens=2))


async def test_every_call_needs_the_token_on_tcp(tiny_model_dir: Path) -> None:
    daemon = GrpcServer(DaemonAddress(host="127.0.0.1", port=0), token="s3cret")
    address = await daemon.start()
    assert address.port > 0
    settings = ServeSettings(tiny_model_dir, None, "cpu")
    await daemon.serve_model(
        lambda: load_served_model(settings, EngineConfig(num_kv_blocks=SMALL_POOL_BLOCKS))
    )
    try:
        for token, message in ((None, "this daemon needs a token"), ("wrong", "wrong token")):
            async with InferenceClient(address, token=token) as client:
                for call in (client.model_info(), client.stats(), client.cancel("x")):
                    with pytest.raises(DaemonError) as caught:
                        await call
                    assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
                    assert message in caught.value.message
                with pytest.raises(DaemonError) as caught:
                    await InferenceClient.collect(client.complete(SHORT))
                assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
                with pytest.raises(DaemonError):
                    await client.health()
        async with InferenceClient(address, token="s3cret") as client:
            assert await client.health() == "SERVING"
            result = await InferenceClient.collect(client.complete(SHORT))
            assert result.figures.generated_tokens == 2
    finally:
        await daemon.stop()


async def test_health_says_not_serving_until_the_model_is_loaded(
    tiny_model_dir: Path, short_dir: Path
) -> None:
    address = DaemonAddress(unix_path=short_dir / "d.sock")
    daemon = GrpcServer(address)
    await daemon.start()
    release = asyncio.Event()
    loop = asyncio.get_running_loop()
    settings = ServeSettings(tiny_model_dir, None, "cpu")

    def slow_load():  # type: ignore[no-untyped-def]
        asyncio.run_coroutine_threadsafe(release.wait(), loop).result()
        return load_served_model(settings, EngineConfig(num_kv_blocks=SMALL_POOL_BLOCKS))

    loading = asyncio.ensure_future(daemon.serve_model(slow_load))
    try:
        async with InferenceClient(address) as client:
            assert await client.health() == "NOT_SERVING"
            with pytest.raises(DaemonError) as caught:
                await InferenceClient.collect(client.complete(SHORT))
            assert caught.value.code == grpc.StatusCode.UNAVAILABLE
            assert "still loading" in caught.value.message
            release.set()
            await loading
            await client.wait_ready(timeout=10)
            assert (await InferenceClient.collect(client.complete(SHORT))).figures.generated_tokens == 2
    finally:
        release.set()
        await daemon.stop()


async def test_shutdown_drains_live_streams_with_a_clear_status(
    endless_model_dir: Path, short_dir: Path
) -> None:
    # a model that never stops by itself: the stream is surely live when SIGTERM comes
    config = EngineConfig(num_kv_blocks=512, draft_num_kv_blocks=16)
    running: RunningDaemon = await start_daemon(
        endless_model_dir, short_dir, drain_seconds=0.0, engine_config=config, max_new_tokens=6000
    )
    long_request = pb.CompleteRequest(prefix=LONG_PREFIX, sampling=pb.SamplingParams(max_tokens=6000))
    chunks: list[pb.CompleteChunk] = []

    async def read() -> None:
        async for chunk in running.client.complete(long_request):
            chunks.append(chunk)

    reader = asyncio.ensure_future(read())
    await wait_until(lambda: chunks, 30, "the long stream's first chunk")
    stopped = await running.daemon.stop("SIGTERM")
    with pytest.raises(DaemonError) as caught:
        await reader
    assert stopped == 1
    assert caught.value.code == grpc.StatusCode.UNAVAILABLE
    assert "shutting down" in caught.value.message
    assert chunks[-1].done and chunks[-1].finish_reason == pb.FINISH_REASON_CANCELLED
    assert not running.address.unix_path.exists()  # type: ignore[union-attr]
    await running.client.close()
