"""Helpers for the network tests: a daemon with its HTTP face, and a daemon in front of a remote engine."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from inference.backends.local_engine import EngineBackend
from inference.backends.local_model import ServeSettings, load_served_model, load_served_models
from inference.backends.remote_model import RemoteSettings, load_remote_model
from inference.backends.served_model import ServedModel
from inference.backends.served_models import ServedModels
from inference.client import InferenceClient
from inference.config import EngineConfig
from inference.http.face import HttpFace
from inference.server.address import DaemonAddress
from inference.server.grpc_server import GrpcServer
from tests.fixtures.held_model import HeldModel, hold_engine
from tests.inference.server.helpers import SMALL_POOL_BLOCKS, RunningDaemon, close_daemon


@dataclass
class FacedDaemon(RunningDaemon):
    face: HttpFace = field(kw_only=True)
    base_url: str = field(kw_only=True)

    async def close(self) -> None:
        await close_daemon(self)
        await self.face.stop()


async def start_faced_daemon(
    model_dir: Path,
    socket_dir: Path,
    *,
    token: str | None = None,
    engine_config: EngineConfig | None = None,
    max_new_tokens: int = 256,
    name: str = "d",
    chat_dir: Path | None = None,
    held: bool = False,
) -> FacedDaemon:
    """A real daemon on a unix socket serving the model (and the chat model `chat_dir` beside it),
    with the HTTP face on 127.0.0.1 (any port); with ``held`` its engine runs a `HeldModel`, which
    only a stop lets past a point the test sets."""
    address = DaemonAddress(unix_path=socket_dir / f"{name}.sock")
    daemon = GrpcServer(address, token=token, max_request_bytes=1024 * 1024)
    await daemon.start()
    face = HttpFace(daemon.runner, DaemonAddress(host="127.0.0.1", port=0), token, daemon.max_request_bytes)
    bound = await face.start()
    settings = ServeSettings(model_dir, None, "cpu", max_new_tokens=max_new_tokens, chat_dir=chat_dir)
    config = engine_config or EngineConfig(num_kv_blocks=SMALL_POOL_BLOCKS)
    models: list[HeldModel] = []

    def load() -> ServedModel | ServedModels:
        if chat_dir is not None:
            return load_served_models(settings, engine_config=config)
        served = load_served_model(settings, config)
        if held:
            assert isinstance(served.backend, EngineBackend)
            models.append(hold_engine(served.backend.engine))
        return served

    await daemon.serve_model(load)
    client = InferenceClient(address, token=token)
    url = f"http://127.0.0.1:{bound.port}/v1"
    return FacedDaemon(daemon, client, address, models[0] if models else None, face=face, base_url=url)


async def start_remote_daemon(
    settings: RemoteSettings, socket_dir: Path, *, name: str = "front"
) -> RunningDaemon:
    """A real daemon on a unix socket that serves from the remote engine `settings` names."""
    address = DaemonAddress(unix_path=socket_dir / f"{name}.sock")
    daemon = GrpcServer(address, max_request_bytes=1024 * 1024)
    await daemon.start()
    try:
        await daemon.serve_model(lambda: load_remote_model(settings))
    except BaseException:
        await daemon.stop()
        raise
    return RunningDaemon(daemon, InferenceClient(address), address)
