"""The daemon supervisor notices that a daemon it started has died, though no call to it failed with
UNAVAILABLE (found by the soak test: calls wait for the channel until their deadline, so after a
SIGKILL every suggestion timed out and the daemon was never started again)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
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


class _InfoClient:
    """A client of a ready daemon that answers GetModelInfo with ``info``."""

    def __init__(self, info: pb.ModelInfo) -> None:
        self.info = info

    async def model_info(self, timeout: float | None = None) -> pb.ModelInfo:
        return self.info


def _info(name: str, context: int, chars_per_token: float, tools: bool) -> pb.ModelInfo:
    return pb.ModelInfo(
        model=pb.ModelDescription(name=name, context_length=context, parameters=context * 1000),
        reply_reserve_limit=context // 2,
        chars_per_token=chars_per_token,
        supports_tools=tools,
        device="cpu",
    )


async def _ready_with(info: pb.ModelInfo) -> tuple[DaemonSupervisor, StatusReporter]:
    status = StatusReporter(lambda method, params: None, lambda message: None)
    supervisor = DaemonSupervisor(DaemonSettings, status)
    supervisor._client = _InfoClient(info)  # type: ignore[assignment]
    await supervisor._became_ready()
    return supervisor, status


async def test_each_task_is_sized_for_the_model_that_serves_it() -> None:
    info = _info("gemma", 32768, 4.5, tools=False)
    info.chat_model.CopyFrom(_info("smollm2", 8192, 3.5, tools=True))
    for task, served_by in (("complete", "completion"), ("predict_edit", "chat"), ("generate_chat", "chat")):
        info.routes.add(task=task, served_by=served_by)
    supervisor, status = await _ready_with(info)
    assert (supervisor.room.model, supervisor.room.context_length, supervisor.room.chars_per_token) == (
        "gemma",
        32768,
        4.5,
    )
    assert (supervisor.next_edit_room.model, supervisor.next_edit_room.context_length) == ("smollm2", 8192)
    assert supervisor.next_edit_room.chars_per_token == 3.5
    # The fix agent asks the chat model: its size and its template's tool calls.
    assert (supervisor.model.name, supervisor.model.parameters, supervisor.supports_tools) == (
        "smollm2",
        8192000,
        True,
    )
    assert status.status.model == "gemma (chat: smollm2)"


async def test_one_model_serves_and_sizes_every_task() -> None:
    supervisor, status = await _ready_with(_info("smollm2", 8192, 3.5, tools=True))
    assert supervisor.room == supervisor.next_edit_room
    assert (supervisor.model.name, supervisor.supports_tools, status.status.model) == (
        "smollm2",
        True,
        "smollm2",
    )
