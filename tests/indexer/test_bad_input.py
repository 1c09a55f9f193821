"""The index's bad input (issue 28, item 4): a damaged database, a full disk, symlink loops, binary
files and 50 MB single-line files. Each gets a logged skip or a rebuild, the process keeps serving,
and nothing that was stored elsewhere is lost."""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from indexer import schema
from indexer.retrieval.base import RetrievalQuery
from indexer.skipping import SkipPolicy, walk_workspace
from indexer.workspace import WorkspaceIndex

FILES = {f"pkg{n % 4}/mod_{n}.py": f"def step_{n}(value):\n    return value + {n}\n" * 30 for n in range(80)}
CALLER = "from pkg1.mod_1 import step_1\n\nresult = step_1(\n"


def _definitions(index: WorkspaceIndex, name: str) -> list[tuple[str, int]]:
    snippets = index.retrieve(
        RetrievalQuery("caller.py", CALLER.replace("step_1", name), 2, 9 + len(name) - 6)
    )
    return sorted({(s.path, s.start_line) for s in snippets if "definitions" in s.sources})


def test_a_truncated_database_is_rebuilt_with_a_warning_and_nothing_else_is_lost(
    tmp_path: Path, write_files: Callable, dump_store: Callable, caplog: pytest.LogCaptureFixture
) -> None:
    root, other_root = tmp_path / "ws", tmp_path / "other"
    write_files(root, FILES)
    write_files(other_root, {"keep.py": "def keep():\n    return 1\n"})
    folder = tmp_path / "index"
    with WorkspaceIndex(root, db_path=folder / "a.sqlite", workers=1) as index:
        index.refresh()
    with WorkspaceIndex(other_root, db_path=folder / "b.sqlite", workers=1) as index:
        index.refresh()
    other_before = dump_store(folder / "b.sqlite")
    database = folder / "a.sqlite"
    os.truncate(database, database.stat().st_size // 2)
    with (
        caplog.at_level(logging.WARNING, logger="indexer"),
        WorkspaceIndex(root, db_path=database, workers=1) as index,
    ):
        report = index.refresh()
        assert (report.added, report.error) == (80, None)
        assert index.store.counts()["files"] == 80
    assert "rebuilding index" in caplog.text and "malformed" in caplog.text
    clean = tmp_path / "clean.sqlite"
    with WorkspaceIndex(root, db_path=clean, workers=1) as index:
        index.refresh()
    assert dump_store(database) == dump_store(clean)
    assert dump_store(folder / "b.sqlite") == other_before
    assert sorted(path.name for path in root.rglob("*.py")) == sorted(Path(path).name for path in FILES)


def test_a_database_that_is_not_one_is_rebuilt_at_open(
    tmp_path: Path, write_files: Callable, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "ws"
    write_files(root, FILES)
    database = tmp_path / "i.sqlite"
    database.write_bytes(b"this is no SQLite file\n" * 500)
    with caplog.at_level(logging.WARNING, logger="indexer"), WorkspaceIndex(root, db_path=database) as index:
        assert index.refresh().added == 80
    assert "rebuilding index" in caplog.text and "unreadable database (file is not a database)" in caplog.text


def _with_page_limit(pages: list[int]) -> Callable[[Path], sqlite3.Connection]:
    """``schema.connect`` whose connections may not grow the database past ``pages[0]`` pages (a full
    disk, as SQLite reports it: SQLITE_FULL)."""
    real_connect = schema.connect

    def connect(db_path: Path) -> sqlite3.Connection:
        connection = real_connect(db_path)
        if pages:
            connection.execute(f"PRAGMA max_page_count={pages[0]}")
        return connection

    return connect


def test_a_full_disk_while_indexing_stops_the_refresh_and_the_old_index_keeps_serving(
    tmp_path: Path, write_files: Callable, dump_store: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    write_files(root, FILES)
    database = tmp_path / "i.sqlite"
    with WorkspaceIndex(root, db_path=database, workers=1) as index:
        index.refresh()
        pages = index.store.query("PRAGMA page_count")[0][0]
        served = _definitions(index, "step_1")
    assert served[0] == ("pkg1/mod_1.py", 0)
    old = dump_store(database)
    more = {
        f"new{n}/big_{n}.py": f"def grown_{n}(value):\n    return value * {n}\n" * 200 for n in range(300)
    }
    write_files(root, more)
    limit = [pages + 8]
    monkeypatch.setattr(schema, "connect", _with_page_limit(limit))
    with WorkspaceIndex(root, db_path=database, workers=1) as index:
        report = index.refresh()
        assert report.error is not None and report.error.startswith(
            "index not updated: database or disk is full"
        )
        assert 0 <= report.added < 300
        assert _definitions(index, "step_1") == served  # the old records still serve
        committed = dump_store(database)
        assert committed["integrity"] == [("ok",)]
        assert {row for row in old["files"]} <= set(committed["files"])
        limit.clear()  # space again: the next refresh completes the rest
    with WorkspaceIndex(root, db_path=database, workers=1) as index:
        again = index.refresh()
        assert again.error is None and again.added == 300 - report.added
    clean = tmp_path / "clean.sqlite"
    with WorkspaceIndex(root, db_path=clean, workers=1) as index:
        index.refresh()
    assert dump_store(database)["chunks"] == dump_store(clean)["chunks"]


def test_symlink_loops_are_walked_once_without_hanging(tmp_path: Path, write_files: Callable) -> None:
    root = tmp_path / "ws"
    write_files(root, {"a/m.py": "def m():\n    return 1\n"})
    (root / "a" / "up").symlink_to("..")  # a directory loop
    (root / "self.py").symlink_to("self.py")  # a link to itself
    (root / "b.py").symlink_to("c.py")
    (root / "c.py").symlink_to("b.py")
    (root / "twin.py").symlink_to("a/m.py")  # a file link is a file
    walk = walk_workspace(root, SkipPolicy())
    assert [file.relative_path for file in walk.files] == ["a/m.py", "twin.py"]
    loop = "unreadable (Too many levels of symbolic links)"
    assert walk.skipped == [("b.py", loop), ("c.py", loop), ("self.py", loop)]
    with WorkspaceIndex(root, db_path=tmp_path / "i.sqlite", workers=1) as index:
        assert index.refresh().added == 2
        index.start_watching()  # the watcher's own walk of the tree does not follow the loop either
        index.stop_watching()
        report = index.refresh_files(["a/up/a/up/a/m.py"])
        assert report.skipped == [("a/up/a/up/a/m.py", "symlinked directory")]
        assert [path for (path,) in index.store.query("SELECT path FROM files ORDER BY path")] == [
            "a/m.py",
            "twin.py",
        ]


def test_binary_and_fifty_megabyte_single_line_files_are_skipped_with_their_reasons(
    tmp_path: Path, write_files: Callable
) -> None:
    root = tmp_path / "ws"
    write_files(root, {"ok.py": "def ok():\n    return 1\n"})
    (root / "blob.py").write_bytes(b"def f():\n" + bytes(range(256)) * 40)
    line = b"x = [" + b"1," * (25 * 1024 * 1024) + b"]"  # 50 MiB on one line
    (root / "huge.py").write_bytes(line)
    with WorkspaceIndex(root, db_path=tmp_path / "a.sqlite", workers=1) as index:
        report = index.refresh()
    assert report.added == 1
    assert sorted(report.skipped) == [("blob.py", "binary"), ("huge.py", "too large")]
    # With the size limit raised above 50 MB, the single line is what keeps it out.
    roomy = SkipPolicy(max_file_bytes=64 * 1024 * 1024)
    with WorkspaceIndex(root, db_path=tmp_path / "b.sqlite", policy=roomy, workers=1) as index:
        assert sorted(index.refresh().skipped) == [("blob.py", "binary"), ("huge.py", "minified")]


def test_a_fifty_megabyte_buffer_is_skipped_not_parsed(tmp_path: Path, write_files: Callable) -> None:
    root = tmp_path / "ws"
    write_files(root, {"ok.py": "def ok():\n    return 1\n", "pasted.py": "def before():\n    return 2\n"})
    with WorkspaceIndex(root, db_path=tmp_path / "i.sqlite", workers=1) as index:
        index.refresh()
        index.update_buffer("pasted.py", "y = '" + "z" * (50 * 1024 * 1024) + "'")
        assert index.store.query("SELECT path FROM files ORDER BY path") == [("ok.py",)]
        assert index.store.query("SELECT path, reason FROM skipped") == [("pasted.py", "too large")]
        assert index.refresh().skipped == [("pasted.py", "too large")]
        index.close_buffer("pasted.py")
        assert index.store.query("SELECT path FROM files ORDER BY path") == [("ok.py",), ("pasted.py",)]
