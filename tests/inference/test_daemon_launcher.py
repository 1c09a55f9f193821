"""Finding, starting and waiting for a daemon process, and reading token files (no torch here)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from inference.client import InferenceClient
from inference.daemon_launcher import (
    DaemonStartError,
    PrivateDaemon,
    TokenFileError,
    codedraft_command,
    daemon_command,
    read_token_file,
)


def test_token_files(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("  s3cret\n")
    token.chmod(0o600)
    assert read_token_file(token) == "s3cret"
    assert read_token_file(str(token)) == "s3cret"
    token.write_text("\n")
    with pytest.raises(TokenFileError, match=r"the token file .*token is empty"):
        read_token_file(token)
    with pytest.raises(TokenFileError, match=r"cannot read the token file .*missing"):
        read_token_file(tmp_path / "missing")


def test_the_daemon_command_is_spelled_once() -> None:
    assert codedraft_command("lsp") == [sys.executable, "-m", "codedraft", "lsp"]
    argv = daemon_command(
        "unix:/r/d.sock", model=Path("/m"), no_draft=True, device="cpu", log_level="warning"
    )
    assert argv == [
        *codedraft_command("--log-level", "warning", "daemon"),
        *("--listen", "unix:/r/d.sock", "--model", "/m", "--no-draft", "--device", "cpu"),
    ]
    # a user's own command replaces `codedraft daemon`; the flags follow it
    own = daemon_command("tcp:127.0.0.1:7000", command=["/opt/cd", "daemon"], kv_cache_mb=64, threads=2)
    assert own == [
        "/opt/cd",
        "daemon",
        "--listen",
        "tcp:127.0.0.1:7000",
        "--kv-cache-mb",
        "64",
        "--threads",
        "2",
    ]


@pytest.mark.slow
def test_a_daemon_that_cannot_start_fails_the_wait_at_once_with_its_reason(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    daemon = PrivateDaemon(broken, prefix="cdp-")

    async def wait() -> None:
        async with InferenceClient(daemon.address) as client:
            await daemon.wait_ready(client, timeout_s=120)

    try:
        with pytest.raises(
            DaemonStartError, match=r"the daemon exited: codedraft: error: unsupported architecture"
        ):
            asyncio.run(wait())
        assert daemon.failure() is not None and "(exit status 2)" in str(daemon.failure())
    finally:
        daemon.stop()
    assert not daemon.folder.exists()
