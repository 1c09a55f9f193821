"""The ``codedraft`` command: composes the subcommands of :mod:`lsp_server.subcommands`."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from types import ModuleType
from typing import NoReturn

from lsp_server.logging_setup import LEVELS, configure_logging
from lsp_server.subcommands import NAMES
from lsp_server.subcommands.errors import CommandError

log = logging.getLogger("codedraft")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("codedraft")
    except PackageNotFoundError:
        return "0+unknown"


class _OneLineErrorParser(argparse.ArgumentParser):
    """Reports a bad flag value in one line that names it, not a usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, with one sub-parser per subcommand module."""
    parser = _OneLineErrorParser(
        prog="codedraft",
        description="codedraft: a local AI pair programmer's backend (language server, indexer, "
        "inference daemon).",
    )
    parser.add_argument("--version", action="version", version=f"codedraft {_version()}")
    parser.add_argument(
        "--log-level",
        choices=LEVELS,
        default="info",
        help="least severe log records to print on stderr (default: info)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in NAMES:
        module: ModuleType = importlib.import_module(f"lsp_server.subcommands.{name}")
        sub = subparsers.add_parser(name, help=module.HELP, description=module.HELP)
        module.configure(sub)
        sub.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``codedraft`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.log_level)
    log.debug("codedraft %s, arguments %s", _version(), sys.argv[1:] if argv is None else argv)
    try:
        return int(args.run(args))
    except CommandError as error:
        print(f"codedraft: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
