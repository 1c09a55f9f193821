"""The ``codedraft`` command line: :mod:`codedraft.cli` and one module per subcommand.

Every subcommand module defines ``HELP`` (one line for ``codedraft --help``), ``configure(parser)`` (its
flags, each with help text) and ``run(args) -> int``. Modules import nothing heavy at top level, so
``--help`` is fast and the language server does not pay for torch.
"""

from __future__ import annotations

NAMES: tuple[str, ...] = ("daemon", "lsp", "index", "context", "complete", "fix", "bench")

MODULES = {"daemon": "daemon_command"}
"""Subcommands whose module is not named after them (``codedraft.daemon`` would be the sixth module
called daemon)."""


def module_name(command: str) -> str:
    """The module of ``codedraft COMMAND``."""
    return f"codedraft.{MODULES.get(command, command)}"
