"""Fixtures shared by several test folders (registered once, so session-scoped ones run once)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.training_run import tiny_corpus, tiny_run

__all__ = ["private_state_dir", "tiny_corpus", "tiny_run"]


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads or writes the user's state folder (the accept history): each gets its own."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("CODEDRAFT_STATE_DIR", str(state))
    return state
