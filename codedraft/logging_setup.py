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
    # The libraries log every message they send at info level: only with --log-level debug.
    for noisy in ("pygls", "grpc", "asyncio", "watchdog"):
        logging.getLogger(noisy).setLevel(logging.DEBUG if level == "debug" else logging.WARNING)
