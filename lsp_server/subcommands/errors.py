"""The error a subcommand raises for a user mistake: printed as one line, exit status 2."""

from __future__ import annotations


class CommandError(Exception):
    """A mistake the user can fix (bad flag value, missing file, bad position).

    The message is one line that names the bad value; the CLI prints it without a traceback.
    """

    exit_code = 2


def not_implemented_yet(command: str, issue: int, what: str) -> CommandError:
    """The error of a subcommand whose feature has not landed yet, naming the issue that builds it."""
    error = CommandError(f"`codedraft {command}` is not implemented yet: {what} arrives with issue {issue}")
    error.exit_code = 3
    return error
