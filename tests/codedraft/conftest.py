"""Fixtures of the command-line tests: a tiny checkpoint, a short folder for sockets, a private index."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fixtures.tiny_models import make_tiny_checkpoint


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("models") / "tiny-base", "llama")


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A folder with a short path: unix socket paths are limited to about 107 bytes."""
    folder = Path(tempfile.mkdtemp(prefix="cdc-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def index_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private index folder, so no test writes to the user's cache."""
    directory = tmp_path / "index-cache"
    monkeypatch.setenv("CODEDRAFT_INDEX_DIR", str(directory))
    return directory


@pytest.fixture
def write_files() -> Callable[[Path, dict[str, str]], None]:
    """Writes files (relative path -> text) under a root."""

    def write(root: Path, files: dict[str, str]) -> None:
        for relative, text in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    return write
