"""The watchdog watcher re-indexes files changed on disk, debounced."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from indexer.workspace import WorkspaceIndex


def wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_watcher_indexes_created_changed_and_deleted_files(tmp_path: Path, write_files: Callable) -> None:
    root = tmp_path / "ws"
    write_files(root, {"a.py": "def first():\n    pass\n", ".gitignore": "out/\n"})
    with WorkspaceIndex(root, db_path=tmp_path / "i.sqlite") as index:
        index.refresh()
        index.start_watching(debounce_s=0.1)

        def defined(name: str) -> list[str]:
            return [row.path for row in index.store.definitions_named([name])]

        (root / "b.py").write_text("def second():\n    pass\n")
        assert wait_for(lambda: defined("second") == ["b.py"])
        (root / "a.py").write_text("def renamed():\n    pass\n")
        assert wait_for(lambda: defined("renamed") == ["a.py"] and defined("first") == [])
        (root / "b.py").unlink()
        assert wait_for(lambda: defined("second") == [])
        (root / "out").mkdir()
        (root / "out" / "c.py").write_text("def ignored():\n    pass\n")
        (root / "d.py").write_text("def after_ignored():\n    pass\n")
        assert wait_for(lambda: defined("after_ignored") == ["d.py"])
        assert defined("ignored") == []
        (root / ".gitignore").write_text("out/\nd.py\n")
        assert wait_for(lambda: defined("after_ignored") == [])
        index.stop_watching()
        (root / "e.py").write_text("def unseen():\n    pass\n")
        time.sleep(0.5)
        assert defined("unseen") == []


def test_changes_an_editor_reports_follow_the_watchers_rule(tmp_path: Path, write_files: Callable) -> None:
    root = tmp_path / "ws"
    write_files(root, {"a.py": "def first():\n    pass\n", ".gitignore": "out/\n"})
    (tmp_path / "link").symlink_to(root)
    # No watcher runs: whatever the index holds below came from files_changed.
    with WorkspaceIndex(root, db_path=root / "own.sqlite") as index:
        index.refresh()

        def defined(name: str) -> list[str]:
            return [row.path for row in index.store.definitions_named([name])]

        (root / "b.py").write_text("def second():\n    pass\n")
        report = index.files_changed([root / "b.py"])
        assert report is not None and (report.added, report.deleted) == (1, 0)
        assert defined("second") == ["b.py"]
        (root / "b.py").unlink()
        report = index.files_changed([root / "b.py"])
        assert report is not None and (report.added, report.deleted) == (0, 1)
        assert defined("second") == []

        (tmp_path / "outside.py").write_text("def outside():\n    pass\n")
        write_files(root, {"node_modules/lib.py": "def vendored():\n    pass\n"})
        own = [root / "own.sqlite", root / "own.sqlite-wal", root / "own.sqlite-shm"]
        assert index.files_changed([tmp_path / "outside.py", root / "node_modules" / "lib.py", *own]) is None
        assert index.files_changed([Path("a.py")]) is None  # relative: whose?
        (root / "notes.bin").write_bytes(b"\x00\x01")
        report = index.files_changed([root / "notes.bin"])
        assert report is not None and report.skipped == [("notes.bin", "unsupported file type")]
        assert index.store.file_language("notes.bin") is None

        (root / "c.py").write_text("def through_link():\n    pass\n")
        index.files_changed([tmp_path / "link" / "c.py"])
        assert defined("through_link") == ["c.py"]

        # A directory or a .gitignore refreshes everything, as the watcher's events do.
        write_files(root, {"pkg/d.py": "def in_folder():\n    pass\n", "pkg/e.py": "def also():\n    pass\n"})
        report = index.files_changed([root / "pkg"])
        assert report is not None and report.added == 2
        assert defined("in_folder") == ["pkg/d.py"]
        (root / ".gitignore").write_text("out/\npkg/\n")
        report = index.files_changed([root / ".gitignore"])
        assert report is not None and report.deleted == 2
        assert defined("in_folder") == [] and defined("first") == ["a.py"]
