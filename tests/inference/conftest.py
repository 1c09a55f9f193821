"""Fixtures shared by the inference tests that serve models: tiny and endless checkpoints, a short socket
folder, and daemons with their HTTP face."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from inference.config import EngineConfig
from tests.fixtures.scripted_model import CHAT_SCRIPT, make_scripted_checkpoint
from tests.fixtures.tiny_models import make_tiny_checkpoint
from tests.inference.faced_daemon import FacedDaemon, start_faced_daemon


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


@pytest.fixture(scope="session")
def endless_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model whose completion never ends by itself (8k context), for deadline tests."""
    return make_scripted_checkpoint(tmp_path_factory.mktemp("models") / "endless", loop=True)


# The two models of a daemon routed by task, scripted so that each call's text says which one wrote it:
# the completer completes COMPLETION_TEXT (without end) and chats COMPLETION_MODEL_CHAT; the chatter
# completes CHAT_MODEL_COMPLETION and chats CHAT_SCRIPT (without end).
COMPLETION_TEXT = "return total"
COMPLETION_MODEL_CHAT = "pass"
CHAT_MODEL_COMPLETION = "yield item"


@pytest.fixture(scope="session")
def completer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("routes") / "completer"
    return make_scripted_checkpoint(folder, completion=COMPLETION_TEXT, chat=COMPLETION_MODEL_CHAT, loop=True)


@pytest.fixture(scope="session")
def chatter_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("routes") / "chatter"
    return make_scripted_checkpoint(
        folder, completion=CHAT_MODEL_COMPLETION, chat=CHAT_SCRIPT, chat_endless=True
    )


@pytest.fixture
async def faced(tiny_model_dir: Path, short_dir: Path) -> AsyncIterator[FacedDaemon]:
    """A daemon on the tiny model with its HTTP face on a loopback port."""
    daemon = await start_faced_daemon(tiny_model_dir, short_dir)
    yield daemon
    await daemon.close()


@pytest.fixture
async def endless_faced(endless_model_dir: Path, short_dir: Path) -> AsyncIterator[FacedDaemon]:
    """A daemon on the endless model (6000 new tokens allowed) with its HTTP face; its model is held
    (`tests/fixtures/held_model.py`), so a test arms it before a request it stops."""
    config = EngineConfig(num_kv_blocks=512, draft_num_kv_blocks=16)
    daemon = await start_faced_daemon(
        endless_model_dir, short_dir, engine_config=config, max_new_tokens=6000, held=True
    )
    yield daemon
    await daemon.close()
