"""``codedraft fix``: the agent loop that proposes a fix and verifies it with a check in a sandbox."""

from __future__ import annotations

import argparse

from lsp_server.subcommands.errors import not_implemented_yet
from lsp_server.subcommands.values import positive_int

HELP = "fix FILE[:LINE] until CHECK passes in a sandboxed scratch copy; prints the verified diff"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="FILE[:LINE]", help="the file (and line) to fix")
    parser.add_argument(
        "--check", required=True, metavar="CMD", help="the command that must pass, e.g. 'pytest -x -q'"
    )
    parser.add_argument(
        "--steps", type=positive_int, default=4, help="most propose-check attempts (default: 4)"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    raise not_implemented_yet("fix", 8, "agent-verified fixes")
