"""Logging for every codedraft process: to stderr, one line per record, level from ``--log-level``."""

from __future__ import annotations

import logging
import sys

LEVELS: tuple[str, ...] = ("debug", "info", "warning", "error")


def configure_logging(level: str) -> None:
    """Sends records at ``level`` and above to stderr (stdout stays free for results and for LSP)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper()))
