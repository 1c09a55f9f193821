"""The client library: no torch, reconnection to a restarted daemon, deadlines and health."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import DaemonError, InferenceClient, explain_transport_failure
from tests.inference.server.helpers import start_daemon

SHORT = pb.CompleteRequest(prefix="import os\n", sampling=pb.SamplingParams(max_tokens=3))


def test_the_client_imports_no_torch() -> None:
    code = (
        "import sys, inference, inference.client, inference.daemon_launcher\n"
        "import codedraft.complete, codedraft.daemon_command, codedraft.fix\n"
        "heavy = sorted(m for m in ('torch', 'numpy', 'inference.engine') if m in sys.modules)\n"
        "print(','.join(heavy))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == ""


async def test_the_client_reconnects_to_a_restarted_daemon(tiny_model_dir: Path, short_dir: Path) -> None:
    first = await start_daemon(tiny_model_dir, short_dir)
    client = InferenceClient(first.address)
    try:
        before = await InferenceClient.collect(client.complete(SHORT))
        await first.daemon.stop()
        await first.client.close()
        assert await client.health(timeout=0.5) == "UNREACHABLE"
        with pytest.raises(DaemonError) as caught:
            await client.stats(timeout=0.3)
        assert caught.value.code == grpc.StatusCode.DEADLINE_EXCEEDED

        # A call made while no daemon listens waits (within its deadline) for one to come up: the new
        # daemon answers it, with the completion, or (when the call lands while its model still loads,
        # as under load) with its "still loading" refusal, never UNREACHABLE or a deadline.
        pending = asyncio.ensure_future(InferenceClient.collect(client.complete(SHORT, timeout=60)))
        await asyncio.sleep(0.3)
        second = await start_daemon(tiny_model_dir, short_dir)
        try:
            try:
                assert (await pending).text == before.text
            except DaemonError as refused:
                assert (refused.code, refused.message) == (
                    grpc.StatusCode.UNAVAILABLE,
                    "the model is still loading; retry in a moment",
                )
            await client.wait_ready(timeout=10)
            assert (await InferenceClient.collect(client.complete(SHORT))).text == before.text
        finally:
            await second.client.close()
            await second.daemon.stop()
    finally:
        await client.close()


async def test_wait_ready_gives_up_with_a_clear_error(short_dir: Path) -> None:
    async with InferenceClient(f"unix:{short_dir}/nobody.sock") as client:
        with pytest.raises(DaemonError, match=r"is not ready after 0.5 s \(UNREACHABLE\)"):
            await client.wait_ready(timeout=0.5)


async def test_without_wait_for_ready_calls_fail_at_once(short_dir: Path) -> None:
    async with InferenceClient(f"unix:{short_dir}/nobody.sock", wait_for_ready=False) as client:
        with pytest.raises(DaemonError) as caught:
            await client.stats(timeout=30)
        assert caught.value.code == grpc.StatusCode.UNAVAILABLE


@pytest.mark.parametrize(
    ("details", "tls", "unix", "hint"),
    [
        ("Socket closed", False, False, "if the daemon uses TLS, connect with --tls-ca or --tls"),
        ("Socket closed", False, True, "the daemon closed the connection: it stopped or is restarting"),
        ("Connection reset by peer", False, True, "the daemon closed the connection"),
        ("Socket closed", True, False, None),  # already on TLS: no advice to use it
        ("CERTIFICATE_VERIFY_FAILED", True, False, "not signed by a CA you trust; check --tls-ca"),
        ("connection refused", False, False, None),
    ],
)
def test_a_transport_failure_is_explained_for_the_connection_it_happened_on(
    details: str, tls: bool, unix: bool, hint: str | None
) -> None:
    explained = explain_transport_failure(details, tls, unix)
    assert explained.startswith(details)
    if hint is None:
        assert explained == details
    else:
        assert hint in explained
    if unix:
        assert "TLS" not in explained  # a daemon on a unix socket is not reached over TLS
