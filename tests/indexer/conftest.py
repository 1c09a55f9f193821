"""Shared fixtures: small workspaces written to tmp folders, and a canonical dump of a store."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest


def _write_files(root: Path, files: dict[str, str]) -> None:
    """Writes ``files`` (relative path -> text) under ``root``."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _dump_store(db_path: Path) -> dict[str, list[tuple]]:
    """Everything a store holds that does not depend on when or in what order it was written."""
    connection = sqlite3.connect(db_path)
    try:
        return {
            "files": connection.execute(
                "SELECT path, content_hash, language, size, mtime_ns, references_blob FROM files"
                " ORDER BY path"
            ).fetchall(),
            "symbols": connection.execute(
                "SELECT f.path, s.name, s.kind, s.scope, s.start_byte, s.end_byte, s.line, s.column,"
                " s.node_start_line, s.node_end_line FROM symbols s JOIN files f ON f.id = s.file_id"
                " ORDER BY 1, 5"
            ).fetchall(),
            "chunks": connection.execute(
                "SELECT f.path, c.start_line, c.end_line, c.start_byte, c.end_byte, c.kind, c.name, c.text,"
                " t.terms FROM chunks c JOIN files f ON f.id = c.file_id JOIN chunks_fts t ON t.rowid = c.id"
                " ORDER BY 1, 2, 3"
            ).fetchall(),
            "counts": connection.execute(
                "SELECT (SELECT count(*) FROM chunks), (SELECT count(*) FROM chunks_fts),"
                " (SELECT count(*) FROM symbols WHERE file_id NOT IN (SELECT id FROM files))"
            ).fetchall(),
            "integrity": connection.execute("PRAGMA integrity_check").fetchall(),
        }
    finally:
        connection.close()


@pytest.fixture
def index_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private index folder, so no test writes to the user's cache."""
    directory = tmp_path / "index-cache"
    monkeypatch.setenv("CODEDRAFT_INDEX_DIR", str(directory))
    return directory


@pytest.fixture
def write_files() -> Callable[[Path, dict[str, str]], None]:
    """Writes files (relative path -> text) under a root."""
    return _write_files


@pytest.fixture
def dump_store() -> Callable[[Path], dict[str, list[tuple]]]:
    """A canonical dump of a store's content, to compare two stores exactly."""
    return _dump_store
