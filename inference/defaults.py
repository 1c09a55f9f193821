"""Where the embedded default model pair lives, and the daemon's default address (no torch here)."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


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
