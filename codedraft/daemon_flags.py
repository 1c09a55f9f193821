"""The daemon a client subcommand (``complete``, ``fix``) talks to: ``--daemon``, ``--token-file`` and
``--model``, and the daemon started for the call when none is named or running."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from codedraft.errors import CommandError

if TYPE_CHECKING:
    from inference.client import InferenceClient
    from inference.daemon_launcher import DaemonProcess
    from inference.server.address import DaemonAddress

RUNNING_DAEMON_READY_TIMEOUT_S = 120.0
"""How long a daemon that was already running may still take to load its model."""


def add_daemon_client_flags(parser: argparse.ArgumentParser) -> None:
    """``--daemon``, ``--token-file`` and ``--model``: the flags of a command that talks to a daemon,
    or starts one for the call."""
    parser.add_argument(
        "--daemon",
        metavar="ADDR",
        default=None,
        help="address of a running daemon (unix:PATH or tcp:HOST:PORT); default: the default socket, "
        "or a daemon started for this call",
    )
    parser.add_argument("--token-file", type=Path, default=None, help="token file of a daemon that needs one")
    parser.add_argument(
        "--tls-ca",
        type=Path,
        default=None,
        help="PEM file of the CA that signed the daemon's TLS certificate (connects over TLS)",
    )
    parser.add_argument(
        "--tls", action="store_true", help="use TLS, trusting the system CA store (implied by --tls-ca)"
    )
    parser.add_argument(
        "--model",
        type=Path,
        default=None,
        help="model directory for a daemon started for this call (default: the embedded model)",
    )


@contextlib.contextmanager
def daemon_for_call(
    args: argparse.Namespace,
) -> Iterator[tuple[DaemonAddress, str | None, DaemonProcess | None]]:
    """The address and token of the daemon the flags name, else of the one on the default socket, else
    of one started for this call (the third value; it is stopped on leaving)."""
    from inference.daemon_launcher import (
        PrivateDaemon,
        TokenFileError,
        read_token_file,
        running_default_daemon,
    )
    from inference.server.address import AddressError, parse_address
    from inference.server.listen import socket_is_live

    token = None
    if args.token_file is not None:
        try:
            token = read_token_file(args.token_file)
        except TokenFileError as error:
            raise CommandError(f"--token-file: {error}") from None
    if args.daemon is not None:
        try:
            address = parse_address(args.daemon)
        except AddressError as error:
            raise CommandError(f"--daemon: {error}") from None
        if address.unix_path is not None and not socket_is_live(address.unix_path):
            raise CommandError(f"no daemon is listening on {address}; start one with `codedraft daemon`")
        yield address, token, None
        return
    running = running_default_daemon() if args.model is None else None
    if running is not None:
        yield running, token, None
        return
    started = PrivateDaemon(args.model, prefix=f"codedraft-{args.command}-")
    try:
        yield started.address, token, started
    finally:
        started.stop()


async def wait_for_daemon(client: InferenceClient, started: DaemonProcess | None) -> None:
    """Waits until ``client``'s daemon serves; a daemon started for the call fails fast with its own
    message when it exits."""
    from inference.daemon_launcher import DaemonStartError

    if started is None:
        await client.wait_ready(timeout=RUNNING_DAEMON_READY_TIMEOUT_S)
        return
    try:
        await started.wait_ready(client)
    except DaemonStartError as error:
        raise CommandError(f"started for this call, {error}") from None
