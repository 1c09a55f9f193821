"""``codedraft complete``: one completion at a file position, from the daemon."""

from __future__ import annotations

import argparse

from lsp_server.subcommands.errors import CommandError, not_implemented_yet
from lsp_server.subcommands.values import file_position

HELP = "complete the code at FILE:LINE:COL (counting from 1) with a running daemon, or one started for it"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("position", type=file_position, metavar="FILE:LINE:COL", help="where to complete")
    parser.add_argument(
        "--daemon",
        metavar="ADDR",
        default=None,
        help="address of a running daemon (unix:PATH or tcp:HOST:PORT); default: the default socket, "
        "or a daemon started for this call",
    )
    parser.add_argument("--json", action="store_true", help="print the completion and its figures as JSON")


def run(args: argparse.Namespace) -> int:
    if not args.position.path.is_file():
        raise CommandError(f"no such file: {args.position.path}")
    raise not_implemented_yet("complete", 4, "completion through the daemon")
