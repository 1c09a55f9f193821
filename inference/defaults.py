"""The daemon's defaults, each written once (no torch here): where the embedded model pair lives, its
address, reply limit, request size and drain time. The command line's flags, the
engine's configuration and the servers take their defaults from here."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

DEFAULT_MAX_NEW_TOKENS = 1024
"""The largest max_tokens a request may ask for (``--max-new-tokens``), below the model's context."""
DEFAULT_MAX_REQUEST_MB = 4
"""The largest request message, gRPC and HTTP alike (``--max-request-mb``)."""
DEFAULT_DRAIN_SECONDS = 5.0
"""On SIGTERM, how long running requests may finish before they are stopped (``--drain-seconds``)."""


def megabytes(count: float) -> int:
    """Bytes in ``count`` MB (MiB: the unit of ``--kv-cache-mb`` and ``--max-request-mb``)."""
    return int(count * 1024 * 1024)


DEFAULT_MAX_REQUEST_BYTES = megabytes(DEFAULT_MAX_REQUEST_MB)
"""`DEFAULT_MAX_REQUEST_MB` in bytes: what the gRPC and HTTP listeners accept unless told otherwise."""


def models_dir() -> Path:
    """The folder holding the embedded models: ``$CODEDRAFT_MODELS_DIR`` or ``models/`` of this checkout."""
    override = os.environ.get("CODEDRAFT_MODELS_DIR")
    return Path(override) if override else REPO_ROOT / "models"


def default_model_dir() -> Path:
    """The embedded target model (``models/codedraft-base``)."""
    return models_dir() / "codedraft-base"


def default_draft_model_dir() -> Path:
    """The embedded draft model (``models/codedraft-draft``)."""
    return models_dir() / "codedraft-draft"


def runtime_dir() -> Path:
    """The user's runtime folder (``$XDG_RUNTIME_DIR``, else a private folder under the temp dir)."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and Path(xdg).is_dir():
        return Path(xdg)
    return Path(os.environ.get("TMPDIR", "/tmp")) / f"codedraft-{os.getuid()}"


def default_socket_path() -> Path:
    """The unix socket the daemon listens on by default."""
    return runtime_dir() / "codedraft" / "daemon.sock"
