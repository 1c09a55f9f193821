"""The error a subcommand raises for a user mistake: printed as one line, exit status 2."""

from __future__ import annotations


class CommandError(Exception):
    """A mistake the user can fix (bad flag value, missing file, bad position).

    The message is one line that names the bad value; the CLI prints it without a traceback.
    """

    exit_code = 2
