"""Fixtures: a real in-process daemon per test (the checkpoints come from tests/inference/conftest.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from inference.config import EngineConfig
from tests.fixtures.scripted_model import make_scripted_checkpoint
from tests.inference.server.helpers import RunningDaemon, start_daemon


@pytest.fixture
async def running(tiny_model_dir: Path, short_dir: Path) -> AsyncIterator[RunningDaemon]:
    """A daemon on the tiny model (no draft) with a 64-block KV pool."""
    daemon = await start_daemon(tiny_model_dir, short_dir)
    yield daemon
    await daemon.client.close()
    await daemon.daemon.stop()


@pytest.fixture(scope="session")
def endless_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model whose completion never ends by itself (8k context), for deadline tests."""
    return make_scripted_checkpoint(tmp_path_factory.mktemp("models") / "endless", loop=True)


@pytest.fixture
async def endless(endless_model_dir: Path, short_dir: Path) -> AsyncIterator[RunningDaemon]:
    """A daemon on the endless model that allows 6000 new tokens: a call runs until stopped."""
    config = EngineConfig(num_kv_blocks=512, draft_num_kv_blocks=16)
    daemon = await start_daemon(endless_model_dir, short_dir, engine_config=config, max_new_tokens=6000)
    yield daemon
    await daemon.client.close()
    await daemon.daemon.stop()
