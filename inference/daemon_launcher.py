"""Finding, starting and waiting for a ``codedraft daemon`` process, and reading its token file.

The one place that spells the command that starts codedraft (:func:`codedraft_command`) and a daemon
(:func:`daemon_command`); the language server, ``codedraft complete`` and ``fix``, the benchmarks and
the tests all start daemons through :class:`DaemonProcess`. Imports no torch, like the client.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import grpc

from inference.client import DaemonError, InferenceClient
from inference.defaults import default_socket_path
from inference.openmp import openmp_environment
from inference.server.address import DaemonAddress
from inference.server.listen import socket_is_live

log = logging.getLogger(__name__)

START_TIMEOUT_S = 300.0
"""How long a daemon started here may take to load its model and serve."""
STOP_TIMEOUT_S = 30.0


class TokenFileError(Exception):
    """A token file that cannot be read or holds no token; the message names the file."""


class DaemonStartError(Exception):
    """A daemon started here exited, or did not serve within its deadline; the message says which."""


def read_token_file(path: Path | str) -> str:
    """The token in ``path`` (``~`` expanded, surrounding whitespace removed)."""
    path = Path(path).expanduser()
    try:
        token = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise TokenFileError(f"cannot read the token file {path}: {error}") from None
    if not token:
        raise TokenFileError(f"the token file {path} is empty")
    if path.stat().st_mode & 0o077:
        log.warning("token file %s is readable by other users; chmod 600 it", path)
    return token


def codedraft_command(*args: str) -> list[str]:
    """The argv that runs ``codedraft ARGS`` with this interpreter, installed as a script or not."""
    return [sys.executable, "-m", "codedraft", *args]


def daemon_command(
    listen: DaemonAddress | str,
    *,
    model: Path | str | None = None,
    draft_model: Path | str | None = None,
    chat_model: Path | str | None = None,
    no_draft: bool = False,
    device: str | None = None,
    kv_cache_mb: int | None = None,
    kv_tokens: int | None = None,
    threads: int | None = None,
    fixed_threads: bool = False,
    log_level: str | None = None,
    command: Sequence[str] | None = None,
) -> list[str]:
    """The argv of ``codedraft [--log-level LEVEL] daemon`` with these flags; ``command``, a user's own
    command that starts a daemon, replaces ``codedraft [--log-level LEVEL] daemon``."""
    if command:
        argv = list(command)
    else:
        argv = codedraft_command(*(("--log-level", log_level) if log_level else ()), "daemon")
    argv += ["--listen", str(listen)]
    if model is not None:
        argv += ["--model", str(model)]
    if draft_model is not None:
        argv += ["--draft-model", str(draft_model)]
    if chat_model is not None:
        argv += ["--chat-model", str(chat_model)]
    if no_draft:
        argv.append("--no-draft")
    if device is not None:
        argv += ["--device", device]
    if kv_cache_mb is not None:
        argv += ["--kv-cache-mb", str(kv_cache_mb)]
    if kv_tokens is not None:
        argv += ["--kv-tokens", str(kv_tokens)]
    if threads is not None:
        argv += ["--threads", str(threads)]
    if fixed_threads:
        argv.append("--fixed-threads")
    return argv


def running_default_daemon() -> DaemonAddress | None:
    """The default socket's address when a daemon listens there, else None."""
    path = default_socket_path()
    return DaemonAddress(unix_path=path) if socket_is_live(path) else None


class DaemonProcess:
    """A daemon this process started, with its output in ``log_path``; :meth:`stop` ends it."""

    def __init__(self, argv: Sequence[str], log_path: Path, *, detach: bool = False) -> None:
        """Starts ``argv`` (from :func:`daemon_command`), appending its output to ``log_path``;
        ``detach`` puts it in a session of its own, so a Ctrl-C meant for the caller does not reach it."""
        self.log_path = log_path
        log_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(log_path, "ab") as log_file:
            self.process = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=detach,
                env=openmp_environment({**os.environ, "PYTHONUNBUFFERED": "1"}),
            )

    def failure(self) -> str | None:
        """Why the daemon exited (the last line it logged), or None while it runs."""
        if self.process.poll() is None:
            return None
        try:
            with open(self.log_path, "rb") as log_file:  # appended to across runs: read its end only
                log_file.seek(max(0, log_file.seek(0, os.SEEK_END) - 4096))
                lines = log_file.read().decode("utf-8", "replace").strip().splitlines()
        except OSError:
            lines = []
        status = f"exit status {self.process.returncode}"
        return f"{lines[-1]} ({status})" if lines else status

    async def wait_ready(self, client: InferenceClient, timeout_s: float = START_TIMEOUT_S) -> None:
        """Returns once ``client``'s daemon serves; :class:`DaemonStartError` as soon as the process
        exits, or when ``timeout_s`` passes. A daemon that refuses the health check (a wrong token)
        raises its :class:`DaemonError` at once."""
        deadline = time.monotonic() + timeout_s
        while (left := deadline - time.monotonic()) > 0:
            failure = self.failure()
            if failure is not None:
                raise DaemonStartError(f"the daemon exited: {failure}; its log: {self.log_path}")
            try:
                await client.wait_ready(timeout=min(0.5, left))
                return
            except DaemonError as error:
                if error.code != grpc.StatusCode.UNAVAILABLE:  # not "still loading": it will not change
                    raise
        raise DaemonStartError(f"the daemon was not ready after {timeout_s:g} s; its log: {self.log_path}")

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """SIGTERM (the daemon drains its requests), then SIGKILL after ``timeout_s``."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    async def stop_async(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """:meth:`stop` without blocking the event loop."""
        await asyncio.to_thread(self.stop, timeout_s)


class PrivateDaemon(DaemonProcess):
    """A daemon on a socket in a temporary folder of its own, for one command or one benchmark; the
    folder (socket and log) is removed when it stops."""

    def __init__(
        self,
        model: Path | None = None,
        *,
        prefix: str = "codedraft-",
        device: str | None = None,
        kv_cache_mb: int | None = None,
        kv_tokens: int | None = None,
        threads: int | None = None,
        fixed_threads: bool = False,
    ) -> None:
        """Starts ``codedraft daemon`` on ``model`` (default: the embedded pair; a model given is
        served without a draft), logging warnings and errors only."""
        self.folder = Path(tempfile.mkdtemp(prefix=prefix))
        self.address = DaemonAddress(unix_path=self.folder / "daemon.sock")
        argv = daemon_command(
            self.address,
            model=model,
            no_draft=model is not None,
            device=device,
            kv_cache_mb=kv_cache_mb,
            kv_tokens=kv_tokens,
            threads=threads,
            fixed_threads=fixed_threads,
            log_level="warning",
        )
        super().__init__(argv, self.folder / "daemon.log")

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        super().stop(timeout_s)
        shutil.rmtree(self.folder, ignore_errors=True)
