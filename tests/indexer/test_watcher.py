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
