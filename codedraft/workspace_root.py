"""The workspace a file belongs to when the command line is not told: its git repository, else its
folder."""

from __future__ import annotations

import subprocess
from pathlib import Path


def repository_root(folder: Path) -> Path | None:
    """The top of the git work tree holding ``folder``, or None (no git, or not in a repository)."""
    try:
        result = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    top = result.stdout.strip()
    return Path(top).resolve() if result.returncode == 0 and top else None


def workspace_of(path: Path) -> Path:
    """The git repository that holds the file ``path``, else the file's folder."""
    folder = path.resolve().parent
    return repository_root(folder) or folder
