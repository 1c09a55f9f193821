"""Fixtures: a real in-process daemon per test (the checkpoints come from tests/inference/conftest.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from inference.config import EngineConfig
from tests.inference.server.helpers import RunningDaemon, close_daemon, start_daemon


@pytest.fixture
async def running(tiny_model_dir: Path, short_dir: Path) -> AsyncIterator[RunningDaemon]:
    """A daemon on the tiny model (no draft) with a 64-block KV pool; its engine is held
    (`RunningDaemon.arm`), which changes nothing until a test arms it."""
    daemon = await start_daemon(tiny_model_dir, short_dir, held=True)
    yield daemon
    await close_daemon(daemon)


@pytest.fixture
async def endless(endless_model_dir: Path, short_dir: Path) -> AsyncIterator[RunningDaemon]:
    """A daemon on the endless model that allows 6000 new tokens: a call runs until stopped; its
    engine is held (`RunningDaemon.arm`)."""
    config = EngineConfig(num_kv_blocks=512, draft_num_kv_blocks=16)
    daemon = await start_daemon(
        endless_model_dir, short_dir, engine_config=config, max_new_tokens=6000, held=True
    )
    yield daemon
    await close_daemon(daemon)
