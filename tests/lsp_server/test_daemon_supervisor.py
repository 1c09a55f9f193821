"""The daemon supervisor notices that a daemon it started has died, though no call to it failed with
UNAVAILABLE (found by the soak test: calls wait for the channel until their deadline, so after a
SIGKILL every suggestion timed out and the daemon was never started again)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from inference.daemon_launcher import DaemonProcess
from lsp_server.config import DaemonSettings
from lsp_server.daemon_supervisor import DaemonSupervisor
from lsp_server.status import StatusReporter


def _supervisor_of(process: DaemonProcess) -> tuple[DaemonSupervisor, object, StatusReporter]:
    status = StatusReporter(lambda method, params: None, lambda message: None)
    supervisor = DaemonSupervisor(DaemonSettings, status)
    client = object()
    # the state after the server started ``process`` and it became ready
    supervisor._process, supervisor._client, supervisor._ready = process, client, True  # type: ignore[assignment]
    return supervisor, client, status


async def test_a_ready_daemon_that_runs_is_used(tmp_path: Path) -> None:
    process = DaemonProcess([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "daemon.log")
    try:
        supervisor, client, status = _supervisor_of(process)
        assert await supervisor.client() is client
        assert status.status.daemon_state == "loading"  # nothing reported it degraded
    finally:
        process.stop()


async def test_a_daemon_that_was_killed_is_marked_failed_to_be_started_again(tmp_path: Path) -> None:
    process = DaemonProcess(
        [sys.executable, "-c", "print('ready', flush=True); import time; time.sleep(60)"],
        tmp_path / "daemon.log",
    )
    process.process.kill()
    process.process.wait()
    supervisor, _, status = _supervisor_of(process)
    with pytest.raises(
        ConnectionError, match=r"the daemon exited: .*exit status -9.* \(next attempt in 1 s\)"
    ):
        await supervisor.client()
    assert status.status.daemon_state == "degraded"
