"""The ``codedraft`` command: composes the subcommand modules of :mod:`codedraft`."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from types import ModuleType
from typing import NoReturn

from codedraft import NAMES, module_name
from codedraft.errors import CommandError
from codedraft.logging_setup import LEVELS, configure_logging
from inference import codedraft_version

log = logging.getLogger("codedraft")


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
    parser.add_argument("--version", action="version", version=f"codedraft {codedraft_version()}")
    parser.add_argument(
        "--log-level",
        choices=LEVELS,
        default="info",
        help="least severe log records to print on stderr (default: info)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in NAMES:
        module: ModuleType = importlib.import_module(module_name(name))
        sub = subparsers.add_parser(name, help=module.HELP, description=module.HELP)
        module.configure(sub)
        sub.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``codedraft`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.log_level)
    log.debug("codedraft %s, arguments %s", codedraft_version(), sys.argv[1:] if argv is None else argv)
    try:
        return int(args.run(args))
    except CommandError as error:
        print(f"codedraft: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
