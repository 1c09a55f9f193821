"""``codedraft lsp``: the language server editors run (stdio by default)."""

from __future__ import annotations

import argparse

from codedraft.errors import CommandError
from codedraft.values import positive_int

HELP = "run the language server over stdio (what editors start), or on --tcp PORT for debugging"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tcp", type=positive_int, metavar="PORT", default=None, help="listen on 127.0.0.1:PORT instead"
    )
    parser.add_argument(
        "--daemon",
        metavar="ADDR",
        default=None,
        help="address of a running daemon (unix:PATH or tcp:HOST:PORT); default: the one on the default "
        "socket, started when none answers (settings can say otherwise)",
    )


def run(args: argparse.Namespace) -> int:
    from inference.server.address import AddressError, parse_address
    from lsp_server.composition import create_server

    if args.daemon is not None:
        try:
            parse_address(args.daemon)
        except AddressError as error:
            raise CommandError(f"--daemon: {error}") from None
    server = create_server()
    server.pinned_daemon_address = args.daemon
    if args.tcp is not None:
        server.start_tcp("127.0.0.1", args.tcp)
    else:
        server.start_io()
    return 0
