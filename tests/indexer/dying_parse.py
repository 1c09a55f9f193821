"""Parse tasks for the worker-death tests: module-level, so spawned workers can import them by name.

A file named ``segv*.py`` or ``kill*.py`` kills the worker parsing it (SIGSEGV, SIGKILL); one named
``once*.py`` does so only the first time (a marker file next to it remembers), as a flaky crash would.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from indexer.file_rows import FileRows
from indexer.parse_pool import rows_or_error

MARKER_DIR_ENV = "CODEDRAFT_TEST_DYING_MARKERS"


def dying_rows(path: str, data: bytes) -> FileRows | Exception:
    """The real rows, except for the files named above."""
    name = path.rsplit("/", 1)[-1]
    if name.startswith("segv"):
        os.kill(os.getpid(), signal.SIGSEGV)
    if name.startswith("kill"):
        os.kill(os.getpid(), signal.SIGKILL)
    if name.startswith("once"):
        marker = Path(os.environ[MARKER_DIR_ENV]) / name
        if not marker.exists():
            marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)
    return rows_or_error(path, data)
