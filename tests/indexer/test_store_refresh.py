"""The store and the incremental refresh: real SQLite files, real workspaces in tmp folders."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from indexer.records import unpack_tags
from indexer.schema import SCHEMA_VERSION, default_db_path
from indexer.skipping import SkipPolicy
from indexer.store import IndexStore
from indexer.workspace import WorkspaceIndex

FILES = {
    "pkg/geometry.py": "def area(width, height):\n    return width * height\n",
    "pkg/use.py": "from pkg.geometry import area\n\n\ndef total():\n    return area(2, 3)\n",
    "web/app.ts": "export function render(): string {\n  return 'x';\n}\n",
    "data.bin.py": "x = 1\0\n",
}


def test_default_location_is_keyed_by_workspace(tmp_path: Path, index_dir: Path) -> None:
    first, second = default_db_path(tmp_path / "a"), default_db_path(tmp_path / "b")
    assert first.parent == index_dir and first != second and first.suffix == ".sqlite"


def test_refresh_plan_add_update_delete(tmp_path: Path, index_dir: Path, write_files: Callable) -> None:
    root = tmp_path / "ws"
    write_files(root, FILES)
    with WorkspaceIndex(root) as index:
        report = index.refresh()
        assert (report.added, report.updated, report.deleted, report.unchanged) == (3, 0, 0, 0)
        assert ("data.bin.py", "binary") in report.skipped
        assert index.store.counts() == {"files": 3, "symbols": 3, "chunks": 4, "skipped": 1}

        again = index.refresh()
        assert (again.indexed, again.deleted, again.unchanged) == (0, 0, 3)
        assert ("data.bin.py", "binary") in again.skipped

        # Same bytes, new mtime: hashed, not parsed.
        os.utime(root / "pkg/use.py", ns=(1, 1))
        touched = index.refresh()
        assert (touched.indexed, touched.unchanged) == (0, 3)
        assert index.store.file_states()["pkg/use.py"].mtime_ns == 1

        (root / "pkg/geometry.py").write_text(
            "def area(w, h):\n    return w * h\n\n\ndef volume():\n    pass\n"
        )
        (root / "web/app.ts").unlink()
        changed = index.refresh()
        assert (changed.added, changed.updated, changed.deleted, changed.unchanged) == (0, 1, 1, 1)
        names = sorted(row.name for row in index.store.definitions_named(["area", "volume", "render"]))
        assert names == ["area", "volume"]


def test_references_are_packed_per_file(tmp_path: Path, write_files: Callable) -> None:
    root = tmp_path / "ws"
    write_files(root, FILES)
    db = tmp_path / "index.sqlite"
    with WorkspaceIndex(root, db_path=db) as index:
        index.refresh()
    connection = sqlite3.connect(db)
    blob = connection.execute("SELECT references_blob FROM files WHERE path='pkg/use.py'").fetchone()[0]
    references = unpack_tags(blob)
    assert [(tag.name, tag.kind, tag.line, tag.column, tag.scope) for tag in references] == [
        ("area", "import", 0, 25, ""),
        ("area", "call", 4, 11, "total"),
    ]
    assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_old_schema_is_rebuilt_with_a_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, write_files: Callable
) -> None:
    root = tmp_path / "ws"
    write_files(root, FILES)
    db = tmp_path / "index.sqlite"
    with WorkspaceIndex(root, db_path=db) as index:
        index.refresh()
    connection = sqlite3.connect(db)
    connection.execute("UPDATE meta SET value='1' WHERE key='schema_version'")
    connection.commit()
    connection.close()
    with caplog.at_level(logging.WARNING, logger="indexer.schema"):
        store = IndexStore(db, root)
    assert f"schema version 1, expected {SCHEMA_VERSION}" in caplog.text
    assert store.counts()["files"] == 0
    store.close()


def test_corrupt_database_is_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, write_files: Callable
) -> None:
    root = tmp_path / "ws"
    write_files(root, FILES)
    db = tmp_path / "index.sqlite"
    db.write_bytes(b"this is not a database" * 100)
    with caplog.at_level(logging.WARNING, logger="indexer.schema"):
        with WorkspaceIndex(root, db_path=db) as index:
            assert index.refresh().added == 3
    assert "rebuilding index" in caplog.text and "unreadable database" in caplog.text


def test_unsaved_buffer_replaces_the_file_until_closed(tmp_path: Path, write_files: Callable) -> None:
    root = tmp_path / "ws"
    write_files(root, FILES)
    with WorkspaceIndex(root, db_path=tmp_path / "i.sqlite") as index:
        index.refresh()
        index.update_buffer(root / "pkg/geometry.py", "def perimeter(w, h):\n    return 2 * (w + h)\n")
        assert [row.path for row in index.store.definitions_named(["perimeter"])] == ["pkg/geometry.py"]
        assert index.store.definitions_named(["area"]) == []
        # A refresh keeps the buffer's version, not the disk's.
        assert index.refresh().indexed == 0
        assert index.store.definitions_named(["area"]) == []
        index.update_buffer("pkg/new.py", "def fresh():\n    pass\n")
        assert [row.path for row in index.store.definitions_named(["fresh"])] == ["pkg/new.py"]
        index.close_buffer(root / "pkg/geometry.py")
        index.close_buffer("pkg/new.py")
        assert [row.name for row in index.store.definitions_named(["area", "perimeter", "fresh"])] == ["area"]


def test_refresh_files_deletes_gone_and_ignored_files(tmp_path: Path, write_files: Callable) -> None:
    root = tmp_path / "ws"
    write_files(root, FILES)
    with WorkspaceIndex(root, db_path=tmp_path / "i.sqlite", policy=SkipPolicy()) as index:
        index.refresh()
        (root / "pkg/use.py").unlink()
        (root / ".gitignore").write_text("web/\n")
        report = index.refresh_files(["pkg/use.py", "web/app.ts"])
        assert report.deleted == 2 and report.skipped == [("web/app.ts", "gitignored")]
        assert set(index.store.file_states()) == {"pkg/geometry.py"}


def test_clean_index_equals_incremental_one(
    tmp_path: Path, write_files: Callable, dump_store: Callable
) -> None:
    root = tmp_path / "ws"
    write_files(root, FILES)
    with WorkspaceIndex(root, db_path=tmp_path / "a.sqlite") as index:
        index.refresh()
        (root / "pkg/geometry.py").write_text("def area(a, b):\n    return a * b\n")
        index.refresh()
    with WorkspaceIndex(root, db_path=tmp_path / "b.sqlite") as index:
        index.refresh()
    assert dump_store(tmp_path / "a.sqlite") == dump_store(tmp_path / "b.sqlite")


def test_a_file_that_fails_to_parse_is_skipped_not_fatal(
    tmp_path: Path, write_files: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    import indexer.parse_pool as parse_pool

    real_analyze = parse_pool.analyze

    def flaky(path: str, data: bytes) -> object:
        if path == "pkg/use.py":
            raise RecursionError("grammar trouble")
        return real_analyze(path, data)

    monkeypatch.setattr(parse_pool, "analyze", flaky)
    root = tmp_path / "ws"
    write_files(root, FILES)
    with WorkspaceIndex(root, db_path=tmp_path / "i.sqlite") as index:
        report = index.refresh()
        assert report.added == 2 and ("pkg/use.py", "indexing failed (RecursionError)") in report.skipped
        monkeypatch.setattr(parse_pool, "analyze", real_analyze)
        assert index.refresh().added == 1


def test_damage_found_during_a_refresh_rebuilds_the_store(
    tmp_path: Path, write_files: Callable, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "ws"
    write_files(root, {f"p{i % 5}/m{i}.py": f"def f{i}(x):\n    return x\n\n" * 40 for i in range(60)})
    db = tmp_path / "i.sqlite"
    with WorkspaceIndex(root, db_path=db, workers=1) as index:
        index.refresh()
    # The header and the meta table survive; pages further in are overwritten.
    data = bytearray(db.read_bytes())
    for offset in range(4096 * 3, len(data) - 4096, 4096 * 2):
        data[offset : offset + 4096] = b"\x17" * 4096
    db.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="indexer.store"), WorkspaceIndex(root, db_path=db) as index:
        assert index.refresh().added == 60
        assert index.store.counts()["files"] == 60
    assert "damaged database (database disk image is malformed)" in caplog.text


def test_paths_outside_the_workspace_are_refused(tmp_path: Path, write_files: Callable) -> None:
    root = tmp_path / "ws"
    write_files(root, FILES)
    with WorkspaceIndex(root, db_path=tmp_path / "i.sqlite") as index:
        assert index.relative_path(root / "pkg" / ".." / "pkg" / "use.py") == "pkg/use.py"
        assert index.relative_path("pkg/./use.py") == "pkg/use.py"
        for outside in ("../elsewhere.py", tmp_path / "elsewhere.py", "pkg/../../x.py"):
            with pytest.raises(ValueError):
                index.update_buffer(outside, "x = 1\n")
        assert index.store.counts()["files"] == 0


def test_buffer_updates_during_a_refresh_wait_for_it_instead_of_blocking(
    tmp_path: Path, write_files: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    import indexer.workspace as workspace_module

    root = tmp_path / "ws"
    write_files(root, FILES)
    started, release = threading.Event(), threading.Event()
    real_refresh = workspace_module.refresh_workspace

    def slow_refresh(*args: object, **kwargs: object) -> object:
        started.set()
        assert release.wait(30)
        return real_refresh(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(workspace_module, "refresh_workspace", slow_refresh)
    with WorkspaceIndex(root, db_path=tmp_path / "i.sqlite") as index:
        refreshing = threading.Thread(target=index.refresh)
        refreshing.start()
        assert started.wait(30)
        # Returns while the refresh holds the store (a blocking call would never return here).
        updater = threading.Thread(
            target=index.update_buffer, args=("pkg/new.py", "def typed():\n    pass\n")
        )
        updater.start()
        updater.join(30)
        assert not updater.is_alive()
        assert index.store.definitions_named(["typed"]) == []
        release.set()
        refreshing.join(30)
        assert [row.path for row in index.store.definitions_named(["typed"])] == ["pkg/new.py"]
