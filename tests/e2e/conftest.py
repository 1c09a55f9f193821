"""Session fixtures for end-to-end tests: scripted models and real daemons serving them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.daemon_process import running_daemon
from tests.fixtures.scripted_model import make_scripted_checkpoint


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/e2e/ is end to end, and slow."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here):
            item.add_marker(pytest.mark.e2e)
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def scripted_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A daemon whose model completes with "return total" and answers chats with
    "value = compute(items)"."""
    root = tmp_path_factory.mktemp("scripted")
    model = make_scripted_checkpoint(root / "model")
    with running_daemon(model, root / "run" / "d.sock", root / "daemon.log") as daemon:
        yield daemon.address


@pytest.fixture(scope="session")
def looping_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model whose completion never ends by itself (for cancellation tests)."""
    return make_scripted_checkpoint(tmp_path_factory.mktemp("looping") / "model", loop=True)
