"""Fixtures: a tiny checkpoint pair per session, and a real in-process daemon per test."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from inference.config import EngineConfig
from tests.daemon.helpers import RunningDaemon, start_daemon
from tests.fixtures.scripted_model import make_scripted_checkpoint
from tests.fixtures.tiny_models import make_tiny_checkpoint


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("models") / "tiny-base", "llama")


@pytest.fixture(scope="session")
def tiny_draft_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_checkpoint(
        tmp_path_factory.mktemp("models") / "tiny-draft", "llama", num_hidden_layers=1, seed=1
    )


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A folder with a short path: unix socket paths are limited to about 107 bytes."""
    folder = Path(tempfile.mkdtemp(prefix="cdd-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


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
