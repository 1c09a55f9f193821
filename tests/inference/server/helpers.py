"""Helpers for the daemon tests: a real daemon in this process, and the engine run without it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import grpc

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.local_engine import EngineBackend
from inference.backends.local_model import ServeSettings, load_served_model, load_served_models
from inference.backends.served_model import ServedModel
from inference.backends.served_models import ServedModels
from inference.client import InferenceClient
from inference.config import EngineConfig, SamplingParams
from inference.defaults import DEFAULT_DRAIN_SECONDS
from inference.engine.engine import LLMEngine
from inference.engine.model_runner import PagedModel
from inference.engine.sequence import Request, RequestOutput
from inference.loading import load_model
from inference.models.base import CausalLM
from inference.server.address import DaemonAddress
from inference.server.grpc_server import GrpcServer
from tests.fixtures.waiting import wait_until

SMALL_POOL_BLOCKS = 64
# With the tiny fixture model, greedy completion after this prefix runs its full 250 tokens without a
# stop token, so a stream with it is still running when a test cuts it short.
LONG_PREFIX = "x"
LONG_TOKENS = 250


@dataclass
class RunningDaemon:
    daemon: GrpcServer
    client: InferenceClient
    address: DaemonAddress


async def start_daemon(
    model_dir: Path,
    socket_dir: Path,
    *,
    draft_dir: Path | None = None,
    token: str | None = None,
    engine_config: EngineConfig | None = None,
    max_request_bytes: int = 1024 * 1024,
    drain_seconds: float = DEFAULT_DRAIN_SECONDS,
    max_new_tokens: int = 256,
    wrap_target: Callable[[CausalLM], PagedModel] | None = None,
    chat_dir: Path | None = None,
) -> RunningDaemon:
    """A real daemon on a unix socket in `socket_dir`, serving the model, and a client of it.

    `wrap_target` replaces the loaded target model by a test double built around it. `chat_dir`: a
    chat model served beside it (each model with a pool of `engine_config`'s blocks).
    """
    address = DaemonAddress(unix_path=socket_dir / "d.sock")
    daemon = GrpcServer(
        address, token=token, max_request_bytes=max_request_bytes, drain_seconds=drain_seconds
    )
    await daemon.start()
    settings = ServeSettings(model_dir, draft_dir, "cpu", max_new_tokens=max_new_tokens, chat_dir=chat_dir)
    config = engine_config or EngineConfig(
        num_kv_blocks=SMALL_POOL_BLOCKS, draft_num_kv_blocks=SMALL_POOL_BLOCKS
    )

    def load() -> ServedModel | ServedModels:
        if chat_dir is not None:
            return load_served_models(settings, engine_config=config)
        served = load_served_model(settings, config)
        if wrap_target is not None:
            assert isinstance(served.backend, EngineBackend)
            runner = served.backend.engine.target
            assert isinstance(runner.model, CausalLM)
            runner.model = wrap_target(runner.model)
        return served

    await daemon.serve_model(load)
    return RunningDaemon(daemon, InferenceClient(address, token=token), address)


async def wait_idle(running: RunningDaemon, timeout: float = 10.0) -> pb.Stats:
    """Stats once no request is live and no KV block is held; the engine's accounting is then checked."""
    last: list[pb.Stats] = []

    async def idle() -> pb.Stats | None:
        last[:] = [await running.client.stats()]
        stats = last[0]
        return stats if stats.requests_active == stats.kv_blocks_used == stats.queue_depth == 0 else None

    try:
        stats = await wait_until(idle, timeout, "the daemon becoming idle", interval_s=0.05)
    except AssertionError as error:
        raise AssertionError(f"{error}; last stats: {last[0] if last else None}") from None
    served = running.daemon.runner.served
    assert served is not None
    backend = served.backend
    assert isinstance(backend, EngineBackend)
    backend.engine.check_invariants()
    return stats


def engine_reference(
    model_dir: Path, prompt_ids: list[int], sampling: SamplingParams
) -> tuple[str, RequestOutput]:
    """The text and last output of the engine run directly on `prompt_ids` (no daemon, no gRPC)."""
    loaded = load_model(model_dir, "cpu", weights="auto")  # the weight form the daemon serves
    engine = LLMEngine.from_loaded(loaded, EngineConfig(num_kv_blocks=SMALL_POOL_BLOCKS))
    engine.add_request(Request("reference", prompt_token_ids=prompt_ids, sampling=sampling))
    pieces: list[str] = []
    while True:
        for output in engine.step():
            pieces.append(output.delta)
            if output.finished:
                return "".join(pieces), output


async def stream_ending(
    call: grpc.aio.UnaryStreamCall,
) -> tuple[list[pb.CompleteChunk], grpc.StatusCode, str]:
    """Every chunk of a streaming call, its status code and details (whether it ended well or not)."""
    chunks = []
    try:
        async for chunk in call:
            chunks.append(chunk)
    except grpc.aio.AioRpcError as error:
        return chunks, error.code(), error.details() or ""
    return chunks, await call.code(), await call.details()
