"""The real ``codedraft lsp`` driven byte by byte, for what a well-behaved client (pytest-lsp's) cannot
send: broken frames, bad JSON, params that do not fit their type, huge documents."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tests.e2e.lsp_harness import CODEDRAFT


def frame(message: dict[str, Any] | bytes) -> bytes:
    """``message`` (or raw bytes as the body) framed with its Content-Length."""
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawClient:
    """Writes bytes to the server (its stdin or a TCP connection); collects what it answers, with the
    time each arrived."""

    def __init__(self, stdout: asyncio.StreamReader, stdin: asyncio.StreamWriter) -> None:
        self.stdout, self.stdin = stdout, stdin
        self.received: list[tuple[float, dict[str, Any]]] = []
        self._taken: set[int] = set()
        self.server_capabilities: dict[str, Any] = {}
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        stdout = self.stdout
        while True:
            length = 0
            while (line := await stdout.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            self.received.append((time.monotonic(), json.loads(await stdout.readexactly(length))))

    async def send(self, data: dict[str, Any] | bytes, raw: bool = False) -> None:
        """Sends ``data`` framed (or, with ``raw``, bytes exactly as given)."""
        self.stdin.write(data if raw and isinstance(data, bytes) else frame(data))
        await self.stdin.drain()

    async def answer(self, msg_id: int | str | None, timeout: float = 30.0) -> dict[str, Any]:
        """The response to ``msg_id`` (None: the next error response without an id)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for index, (_, message) in enumerate(self.received):
                if index not in self._taken and "method" not in message and message.get("id") == msg_id:
                    self._taken.add(index)
                    return message
            await asyncio.sleep(0.02)
        raise AssertionError(f"no answer to id {msg_id!r} within {timeout} s")

    async def request(self, msg_id: int, method: str, params: Any, timeout: float = 30.0) -> dict[str, Any]:
        await self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return await self.answer(msg_id, timeout)

    async def notify(self, method: str, params: Any) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def shown_messages(self) -> list[str]:
        return [m["params"]["message"] for _, m in self.received if m.get("method") == "window/showMessage"]

    async def alive(self, msg_id: int, timeout: float = 30.0) -> None:
        """Asserts that ``codedraft.status`` is answered: the server still serves. Not timed beyond
        ``timeout`` (a server that stalls, as pygls's codec did for a minute on a 50 MB line, fails
        it): how fast it answers depends on the machine and belongs in bench/."""
        reply = await self.request(
            msg_id, "workspace/executeCommand", {"command": "codedraft.status", "arguments": []}, timeout
        )
        assert "result" in reply and "state" in reply["result"], reply


async def _initialized(client: RawClient, workspace: Path, capabilities: dict[str, Any]) -> None:
    initialized = await client.request(
        1, "initialize", {"processId": None, "rootUri": workspace.as_uri(), "capabilities": capabilities}, 60
    )
    client.server_capabilities = initialized["result"]["capabilities"]
    await client.notify("initialized", {})


@contextlib.asynccontextmanager
async def raw_lsp(
    private_dir: Path, capabilities: dict[str, Any], tcp_port: int | None = None
) -> AsyncIterator[RawClient]:
    """``codedraft lsp`` with no daemon for the workspace ``private_dir/ws``, initialized with
    ``capabilities``, over stdio (or on ``tcp_port``); its log in ``private_dir/lsp.log``."""
    workspace = private_dir / "ws"
    workspace.mkdir(exist_ok=True)
    (private_dir / "run").mkdir(parents=True, exist_ok=True, mode=0o700)
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(private_dir / "cache"),
        "XDG_RUNTIME_DIR": str(private_dir / "run"),
    }
    tcp = ["--tcp", str(tcp_port)] if tcp_port is not None else []
    process = await asyncio.create_subprocess_exec(
        CODEDRAFT,
        "lsp",
        "--daemon",
        f"unix:{private_dir}/none.sock",
        *tcp,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=(private_dir / "lsp.log").open("wb"),
        env=env,
        limit=1 << 26,
    )
    if tcp_port is None:
        assert process.stdout is not None and process.stdin is not None
        client = RawClient(process.stdout, process.stdin)
    else:
        client = RawClient(*await _connect(tcp_port))
    try:
        await _initialized(client, workspace, capabilities)
        yield client
    finally:
        with contextlib.suppress(Exception):
            await client.request(99_999, "shutdown", None, 10)
            await client.notify("exit", None)
            await asyncio.wait_for(process.wait(), 10)
        if process.returncode is None:
            process.kill()
            await process.wait()
        client._reader.cancel()


async def _connect(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    deadline = time.monotonic() + 60
    while True:
        try:
            return await asyncio.open_connection("127.0.0.1", port, limit=1 << 26)
        except OSError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)
