"""Fixtures shared by the inference tests that serve models: tiny checkpoints and a short socket folder."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

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
