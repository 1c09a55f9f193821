"""``codedraft context``: placeholder until the indexer lands."""

from __future__ import annotations

import argparse

from lsp_server.subcommands.errors import not_implemented_yet

HELP = "print the snippets retrieval would send for FILE:LINE:COL"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", help="FILE:LINE:COL, counting from 1")


def run(args: argparse.Namespace) -> int:
    raise not_implemented_yet("context", 6, "the workspace indexer")
