"""``codedraft index``: placeholder until the indexer lands."""

from __future__ import annotations

import argparse

from lsp_server.subcommands.errors import not_implemented_yet

HELP = "index a workspace (tree-sitter tags and chunks in SQLite)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", help="the workspace folder")


def run(args: argparse.Namespace) -> int:
    raise not_implemented_yet("index", 6, "the workspace indexer")
