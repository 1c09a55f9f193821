"""``codedraft lsp``: the language server editors run (stdio by default)."""

from __future__ import annotations

import argparse

from lsp_server.subcommands.errors import not_implemented_yet
from lsp_server.subcommands.values import positive_int

HELP = "run the language server over stdio (what editors start), or on --tcp PORT for debugging"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tcp", type=positive_int, metavar="PORT", default=None, help="listen on 127.0.0.1:PORT instead"
    )
    parser.add_argument(
        "--daemon",
        metavar="ADDR",
        default=None,
        help="address of a running daemon (unix:PATH or tcp:HOST:PORT); default: find or start one",
    )


def run(args: argparse.Namespace) -> int:
    raise not_implemented_yet("lsp", 7, "the language server")
