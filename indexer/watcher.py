"""Keeps an index live: a watchdog observer whose events, debounced, re-index the changed files; and
the rule for which changes concern an index (``ChangeScope``), which changes an editor reports follow too."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

log = logging.getLogger(__name__)


class ChangeScope:
    """Which changed paths concern an index, and which of them ask for a whole refresh: the one rule
    for the index's own watcher and for the changes an editor reports. Paths outside ``root``, in an
    excluded directory, or among ``own`` (the index's own database files, when they lie in the
    workspace: each refresh writes them, so watching them would never let the changes settle) do
    not concern it."""

    def __init__(self, root: Path, excluded: frozenset[str], own_files: Collection[Path] = ()) -> None:
        self.root = root
        self.excluded = excluded
        self.own = _inside(root, own_files)

    def relative(self, path: str | bytes) -> str | None:
        """``path`` (absolute) relative to the root, or None when the change does not concern the index."""
        text = path.decode("utf-8", "replace") if isinstance(path, bytes) else path
        try:
            relative = Path(text).relative_to(self.root).as_posix()
        except ValueError:
            return None
        if (
            relative == "."
            or relative in self.own
            or any(part in self.excluded for part in relative.split("/"))
        ):
            return None
        return relative

    @staticmethod
    def needs_full_refresh(relative: str, is_directory: bool) -> bool:
        """Whether a change to ``relative`` asks for a whole refresh rather than one of the path."""
        # A directory event may move many files; a changed .gitignore may hide or show many.
        return is_directory or relative.rsplit("/", 1)[-1] == ".gitignore"


class _PendingChanges(FileSystemEventHandler):
    """Collects changed paths from watchdog's thread; a directory event asks for a full refresh."""

    def __init__(self, scope: ChangeScope, wake: threading.Condition) -> None:
        self.scope = scope
        self.wake = wake
        self.paths: set[str] = set()
        self.full_refresh = False
        self.last_event = 0.0

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed", "closed_no_write"):
            return
        touched = [event.src_path, getattr(event, "dest_path", "")]
        relative = [
            path for path in (self.scope.relative(path) for path in touched if path) if path is not None
        ]
        if not relative:
            return
        with self.wake:
            if any(self.scope.needs_full_refresh(path, event.is_directory) for path in relative):
                self.full_refresh = True
            else:
                self.paths.update(relative)
            self.last_event = time.monotonic()
            self.wake.notify()


class WorkspaceWatcher:
    """Watches ``scope``'s root and calls ``on_paths(paths)`` (or ``on_full()`` after directory
    events) once changes have been quiet for ``debounce_s``, from its own thread."""

    def __init__(
        self,
        scope: ChangeScope,
        on_paths: Callable[[list[str]], object],
        on_full: Callable[[], object],
        debounce_s: float = 0.3,
    ) -> None:
        self.root = scope.root
        self.on_paths = on_paths
        self.on_full = on_full
        self.debounce_s = debounce_s
        self._wake = threading.Condition()
        self._pending = _PendingChanges(scope, self._wake)
        self._observer = Observer()
        self._observer.schedule(self._pending, str(scope.root), recursive=True)
        self._stopping = False
        self._worker = threading.Thread(target=self._run, name="codedraft-index-watcher", daemon=True)

    def start(self) -> None:
        """Starts watching (events before this call are not seen)."""
        self._observer.start()
        self._worker.start()

    def stop(self) -> None:
        """Stops watching; changes still pending are dropped (the next refresh finds them)."""
        with self._wake:
            self._stopping = True
            self._wake.notify()
        self._observer.stop()
        self._observer.join(timeout=5)
        self._worker.join(timeout=5)

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._stopping and not (self._pending.paths or self._pending.full_refresh):
                    self._wake.wait()
                if self._stopping:
                    return
                quiet_for = time.monotonic() - self._pending.last_event
                if quiet_for < self.debounce_s:
                    self._wake.wait(self.debounce_s - quiet_for)
                    continue
                paths, self._pending.paths = sorted(self._pending.paths), set()
                full, self._pending.full_refresh = self._pending.full_refresh, False
            try:
                if full:
                    self.on_full()
                elif paths:
                    self.on_paths(paths)
            except Exception:
                # A failed re-index must not kill the watcher; the next change or refresh retries.
                log.exception("re-indexing after file changes failed")


def _inside(root: Path, files: Collection[Path]) -> frozenset[str]:
    """``files`` that lie under ``root``, relative to it."""
    inside = set()
    for path in files:
        try:
            inside.add(path.resolve().relative_to(root.resolve()).as_posix())
        except ValueError:
            continue
    return frozenset(inside)
