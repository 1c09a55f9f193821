"""Helpers for the daemon tests: a real daemon in this process, and the engine run without it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import grpc

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.local_engine import EngineBackend
from inference.backends.local_model import ServeSettings, load_served_model, load_served_models
from inference.backends.served_model import ServedModel
from inference.backends.served_models import ServedModels
from inference.client import DaemonError, InferenceClient
from inference.config import EngineConfig, SamplingParams
from inference.defaults import DEFAULT_DRAIN_SECONDS
from inference.engine.engine import LLMEngine
from inference.engine.model_runner import PagedModel
from inference.engine.sequence import Request, RequestOutput
from inference.loading import load_model
from inference.models.base import CausalLM
from inference.server.address import DaemonAddress
from inference.server.grpc_server import GrpcServer
from tests.fixtures.held_model import HeldModel, hold_engine
from tests.fixtures.waiting import wait_until

SMALL_POOL_BLOCKS = 64
# With the tiny fixture model, greedy completion after this prefix runs its full 250 tokens without a
# stop token, so a stream with it is still running when a test cuts it short.
LONG_PREFIX = "x"
LONG_TOKENS = 250


# A deadline proves something only once the request has reached the engine; on a machine so busy that
# it had not, the next, longer one is tried.
DEADLINES_S = (0.5, 1.5, 4.5)


@dataclass
class RunningDaemon:
    daemon: GrpcServer
    client: InferenceClient
    address: DaemonAddress
    held: HeldModel | None = None
    """The engine's model when the daemon was started ``held``: armed before a request the test stops."""

    def arm(self, passes: int) -> None:
        """Let the engine's next ``passes`` forward passes run, then hold a request running alone until
        it is stopped (`tests/fixtures/held_model.py`)."""
        assert self.held is not None, "the daemon was not started held"
        self.held.arm(passes)


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
    held: bool = False,
) -> RunningDaemon:
    """A real daemon on a unix socket in `socket_dir`, serving the model, and a client of it.

    `wrap_target` replaces the loaded target model by a test double built around it; ``held`` by a
    `HeldModel` (see `RunningDaemon.arm`). `chat_dir`: a chat model served beside it (each model with
    a pool of `engine_config`'s blocks).
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

    models: list[HeldModel] = []

    def load() -> ServedModel | ServedModels:
        if chat_dir is not None:
            return load_served_models(settings, engine_config=config)
        served = load_served_model(settings, config)
        if wrap_target is not None:
            assert isinstance(served.backend, EngineBackend)
            runner = served.backend.engine.target
            assert isinstance(runner.model, CausalLM)
            runner.model = wrap_target(runner.model)
        if held:
            assert isinstance(served.backend, EngineBackend)
            models.append(hold_engine(served.backend.engine))
        return served

    await daemon.serve_model(load)
    client = InferenceClient(address, token=token)
    return RunningDaemon(daemon, client, address, models[0] if models else None)


async def close_daemon(running: RunningDaemon) -> None:
    """Closes the client and stops the daemon (a held engine is let go first, so a failed test does
    not wait for its hold)."""
    if running.held is not None:
        running.held.stop()
    await running.client.close()
    await running.daemon.stop()


async def run_past_a_deadline(
    running: RunningDaemon, passes: int, call: Callable[[float], Awaitable[object]], engine: RunningDaemon
) -> None:
    """Runs ``call(deadline)`` while ``engine``'s held model holds the request after ``passes`` passes
    (it cannot end by itself): only the deadline ends the call, with DEADLINE_EXCEEDED. ``running`` is
    the daemon called (``engine`` itself, or a daemon in front of it)."""
    assert engine.held is not None
    for deadline in DEADLINES_S:
        engine.arm(passes)
        try:
            await call(deadline)
        except DaemonError as error:
            assert error.code == grpc.StatusCode.DEADLINE_EXCEEDED, error
        else:
            raise AssertionError(f"the call ended within its {deadline} s deadline")
        if engine.held.holding.is_set():
            return
        await wait_idle(engine)
        await wait_until(_idle_at(running), 10, "the called daemon becoming idle")
    raise AssertionError(f"the request never reached the engine within {DEADLINES_S[-1]} s")


def _idle_at(running: RunningDaemon) -> Callable[[], Awaitable[bool]]:
    async def idle() -> bool:
        return (await running.client.stats()).requests_active == 0

    return idle


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
