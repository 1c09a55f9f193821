"""A real ``codedraft lsp`` (which starts and supervises the real daemon) driven from synchronous code.

hypothesis's state machines call their rules synchronously, while pytest-lsp's client lives in an
event loop: the loop runs in a thread of its own and every call waits for its coroutine with a
deadline, so a request that hangs fails the soak instead of stalling it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types

from inference.daemon_launcher import codedraft_command
from tests.e2e.lsp_harness import RecordingClient, running_lsp

T = TypeVar("T")

SLACK_S = 10.0
"""How much longer than its own timeout a request may take before the soak calls it hung (a busy
2-core machine, the event loop's turn, the answer's trip back)."""


class Hung(AssertionError):
    """A request that did not finish within its timeout plus :data:`SLACK_S`."""


class LspSession:
    """The language server for ``workspace`` with its private cache and runtime directories under
    ``private``; its daemon serves ``model`` on the CPU (started by the server, restarted when it dies)."""

    def __init__(self, workspace: Path, private: Path, model: Path, settings: dict[str, Any]) -> None:
        self.workspace = workspace
        self.private = private
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="soak-lsp", daemon=True)
        self._thread.start()
        daemon = {
            "command": codedraft_command("daemon", "--kv-cache-mb", "32"),
            "model": str(model),
            "device": "cpu",
        }
        self._settings = {**settings, "daemon": daemon}
        self._exit = contextlib.AsyncExitStack()
        self.client: RecordingClient = self.run(self._start(), 120.0, "starting the language server")

    async def _start(self) -> RecordingClient:
        return await self._exit.enter_async_context(
            # errors only: thousands of steps would log thousands of lines, none of them checked
            running_lsp(self.workspace, self.private, settings=self._settings, log_level="error")
        )

    @property
    def server_pid(self) -> int:
        return int(self.client._server.pid)  # type: ignore[union-attr]

    def run(self, coroutine: Coroutine[Any, Any, T], timeout_s: float, what: str) -> T:
        """Runs ``coroutine`` in the client's loop; :class:`Hung` after ``timeout_s`` + :data:`SLACK_S`."""
        future = asyncio.run_coroutine_threadsafe(_within(coroutine, timeout_s + SLACK_S, what), self._loop)
        return future.result()

    def notify(self, method: str, params: Any) -> None:
        """Sends a notification (in the loop's thread, where the client writes)."""
        self._loop.call_soon_threadsafe(self.client.protocol.notify, method, params)

    def request(self, method: str, params: Any, timeout_s: float, msg_id: str | None = None) -> Any:
        """Sends a request and waits for its answer (:class:`Hung` past ``timeout_s`` + slack)."""

        async def call() -> Any:
            return await self.client.protocol.send_request_async(method, params, msg_id=msg_id)

        return self.run(call(), timeout_s, method)

    def cancelled_request(
        self, method: str, params: Any, after_s: float, timeout_s: float, msg_id: str
    ) -> Any:
        """Sends a request, cancels it after ``after_s`` (``$/cancelRequest``) and waits for it to end:
        its answer, or the error that says it was cancelled."""

        async def call() -> Any:
            answer = self.client.protocol.send_request_async(method, params, msg_id=msg_id)
            await asyncio.sleep(after_s)
            self.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            try:
                return await answer
            except Exception as error:  # the server answers RequestCancelled (or an empty list)
                if "cancel" not in str(error).lower():
                    raise
                return None

        return self.run(call(), timeout_s, f"{method} cancelled")

    def command(self, name: str, timeout_s: float = 20.0) -> Any:
        """``workspace/executeCommand`` ``name`` with no arguments."""
        return self.request(
            types.WORKSPACE_EXECUTE_COMMAND, types.ExecuteCommandParams(command=name, arguments=[]), timeout_s
        )

    def sync(self) -> None:
        """Returns once the server has handled every notification sent so far (a request is answered
        after them)."""
        self.command("codedraft.status")

    def close(self) -> None:
        """Shuts the server down (it stops the daemon it started) and ends the loop."""
        try:
            self.run(self._exit.aclose(), 60.0, "shutting the language server down")
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)


async def _within(awaitable: Awaitable[T], timeout_s: float, what: str) -> T:
    try:
        return await asyncio.wait_for(awaitable, timeout_s)
    except TimeoutError:
        raise Hung(f"{what}: no answer within {timeout_s:g} s") from None
