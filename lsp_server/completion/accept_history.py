"""What the user did with the suggestions they were shown, per model, kept on their machine.

Only figures are kept, never text: per model, how many suggestions were shown, accepted whole,
accepted in part and dismissed, and for the last :data:`MAX_OUTCOMES` settled suggestions the gate's
figures (see ``confidence_gate.FEATURES``) with whether the user took it.
The file is ``accept_history.json`` in :func:`state_dir`, replaced atomically on every change. A
corrupt file is ignored (with a warning) and a folder that cannot be written leaves the history in
memory (with one warning): the gate then works from what it has, and the server keeps serving.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

MAX_OUTCOMES = 500
"""Settled suggestions kept per model: the gate adapts to the user's recent habits, not all of them."""
FILE_NAME = "accept_history.json"
FORMAT_VERSION = 1
STATE_DIR_ENV = "CODEDRAFT_STATE_DIR"


def state_dir() -> Path:
    """The user's state folder for codedraft: ``$CODEDRAFT_STATE_DIR``, else
    ``$XDG_STATE_HOME/codedraft``, else ``~/.local/state/codedraft`` (the XDG default)."""
    override = os.environ.get(STATE_DIR_ENV)
    if override:
        return Path(override)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "codedraft"


@dataclass(frozen=True)
class Outcome:
    """A settled suggestion: the gate's figures when it was shown, and whether the user took it
    (whole or in part)."""

    scores: dict[str, float]
    accepted: bool


@dataclass
class ModelHistory:
    """One model's counts and its last outcomes (at most :data:`MAX_OUTCOMES`, oldest first)."""

    shown: int = 0
    accepted: int = 0
    partial: int = 0
    dismissed: int = 0
    outcomes: deque[Outcome] = field(default_factory=lambda: deque(maxlen=MAX_OUTCOMES))

    @property
    def accept_rate(self) -> float | None:
        """Accepted (whole or in part) per shown suggestion; None before any was shown."""
        return (self.accepted + self.partial) / self.shown if self.shown else None


class AcceptHistory:
    """The per-model histories, read from ``path`` on first use and written back on each change."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._models: dict[str, ModelHistory] | None = None
        self._write_warned = False

    @property
    def path(self) -> Path:
        """The state file (resolved on first use, so the environment of the server's process counts)."""
        if self._path is None:
            self._path = state_dir() / FILE_NAME
        return self._path

    def model(self, name: str) -> ModelHistory:
        """The history of ``name`` (empty when nothing was recorded)."""
        return self._loaded().get(name) or ModelHistory()

    def shown(self, model: str) -> None:
        """A suggestion of ``model`` was shown."""
        self._entry(model).shown += 1
        self._save()

    def settled(self, model: str, scores: dict[str, float] | None, how: str) -> None:
        """A shown suggestion was ``accepted``, ``partial`` (accepted in part) or ``dismissed``; its
        gate figures (None when the daemon sent none) join the outcomes."""
        entry = self._entry(model)
        if how not in ("accepted", "partial", "dismissed"):
            raise ValueError(f"unknown outcome {how!r}")
        setattr(entry, how, getattr(entry, how) + 1)
        if scores is not None:
            entry.outcomes.append(Outcome(dict(scores), how != "dismissed"))
        self._save()

    def reset(self) -> None:
        """Forgets every model's history, on disk too."""
        self._models = {}
        self._save()

    def _entry(self, model: str) -> ModelHistory:
        return self._loaded().setdefault(model, ModelHistory())

    def _loaded(self) -> dict[str, ModelHistory]:
        if self._models is None:
            self._models = _read(self.path)
        return self._models

    def _save(self) -> None:
        document = {"version": FORMAT_VERSION, "models": {n: _to_json(h) for n, h in self._loaded().items()}}
        try:
            _write_atomically(self.path, json.dumps(document, separators=(",", ":")))
        except OSError as error:
            if not self._write_warned:
                self._write_warned = True
                log.warning(
                    "cannot keep the accept history in %s (kept in memory only): %s", self.path, error
                )


def _read(path: Path) -> dict[str, ModelHistory]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        return {}  # nothing recorded yet (a folder that cannot hold it is reported when writing)
    except (OSError, ValueError) as error:
        log.warning("ignored the accept history in %s (unreadable): %s", path, error)
        return {}
    try:
        if raw["version"] != FORMAT_VERSION:
            raise ValueError(f"format version {raw['version']!r}")
        return {str(name): _from_json(entry) for name, entry in raw["models"].items()}
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        log.warning("ignored the accept history in %s (malformed): %s", path, error)
        return {}


def _from_json(entry: dict[str, Any]) -> ModelHistory:
    shown, accepted, partial, dismissed = (
        int(entry[name]) for name in ("shown", "accepted", "partial", "dismissed")
    )
    if min(shown, accepted, partial, dismissed) < 0:
        raise ValueError("negative count")
    outcomes = (
        Outcome({str(k): float(v) for k, v in scores.items()}, bool(accepted))
        for scores, accepted in entry["outcomes"]
    )
    return ModelHistory(shown, accepted, partial, dismissed, deque(outcomes, maxlen=MAX_OUTCOMES))


def _to_json(history: ModelHistory) -> dict[str, Any]:
    return {
        "shown": history.shown,
        "accepted": history.accepted,
        "partial": history.partial,
        "dismissed": history.dismissed,
        "outcomes": [[outcome.scores, int(outcome.accepted)] for outcome in history.outcomes],
    }


def _write_atomically(path: Path, text: str) -> None:
    """Writes ``text`` to a temporary file beside ``path`` and renames it over ``path``, so a reader
    (or a crash) sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
