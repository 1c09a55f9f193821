"""The layout of an index database, where it lives, opening it (rebuilding what cannot be used), and
which of its errors leave it as it was."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3
INDEX_DIR_ENV = "CODEDRAFT_INDEX_DIR"
_CACHE_KIB = 32 * 1024

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    content_hash TEXT NOT NULL,
    language TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    indexed_at REAL NOT NULL,
    references_blob BLOB NOT NULL
);
CREATE TABLE skipped(
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, reason TEXT NOT NULL
);
CREATE TABLE symbols(
    file_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    scope TEXT NOT NULL,
    start_byte INTEGER NOT NULL,
    end_byte INTEGER NOT NULL,
    line INTEGER NOT NULL,
    column INTEGER NOT NULL,
    node_start_line INTEGER NOT NULL,
    node_end_line INTEGER NOT NULL
);
CREATE INDEX symbols_by_name ON symbols(name);
CREATE INDEX symbols_by_file ON symbols(file_id);
CREATE TABLE chunks(
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    start_byte INTEGER NOT NULL,
    end_byte INTEGER NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX chunks_by_file ON chunks(file_id, start_line);
CREATE VIRTUAL TABLE chunks_fts USING fts5(terms, tokenize="unicode61 tokenchars '_'");
"""


def default_db_path(workspace: Path, environ: Mapping[str, str] = os.environ) -> Path:
    """Where a workspace's index lives: ``$CODEDRAFT_INDEX_DIR`` or the user's cache directory (of
    ``environ``, the process's own environment unless another process's is asked about)."""
    base = environ.get(INDEX_DIR_ENV)
    if base:
        directory = Path(base)
    else:
        cache = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        directory = Path(cache) / "codedraft" / "index"
    key = hashlib.sha256(str(workspace.resolve()).encode("utf-8")).hexdigest()[:20]
    return directory / f"{key}.sqlite"


def connect(db_path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL journal, shareable by threads."""
    connection = sqlite3.connect(db_path, check_same_thread=False, isolation_level=None, timeout=30)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    # 32 MiB of page cache instead of SQLite's 2 MiB: writing a large workspace's full-text index
    # (and searching it) keeps touching more pages than the default holds.
    connection.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
    return connection


def is_write_failure(error: sqlite3.Error) -> bool:
    """Whether SQLite could not write (a full disk or quota, an I/O error, a read-only file): the
    database is still what it was, so it keeps serving and a later refresh tries again."""
    code = getattr(error, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_READONLY,
    )


def database_files(db_path: Path) -> tuple[Path, ...]:
    """The files SQLite keeps for the database at ``db_path``: itself, its WAL, shared memory and
    rollback journal."""
    return tuple(Path(f"{db_path}{suffix}") for suffix in ("", "-wal", "-shm", "-journal"))


def delete_database(db_path: Path) -> None:
    """Removes a database with the files SQLite keeps beside it."""
    for path in database_files(db_path):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def open_database(db_path: Path, workspace: Path) -> sqlite3.Connection:
    """Opens a workspace's database, rebuilding it empty (with a log line) when its schema version is
    not this one or SQLite cannot read it."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    if db_path.exists():
        problem: str
        try:
            connection = connect(db_path)
            row = connection.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is not None and int(row[0]) == SCHEMA_VERSION:
                return connection
            problem = f"schema version {row[0] if row else 'missing'}, expected {SCHEMA_VERSION}"
            connection.close()
        except sqlite3.DatabaseError as error:
            problem = f"unreadable database ({error})"
        log.warning("rebuilding index %s: %s", db_path, problem)
        delete_database(db_path)
    connection = connect(db_path)
    connection.executescript(
        "BEGIN;" + _SCHEMA + f"INSERT INTO meta VALUES('schema_version', '{SCHEMA_VERSION}');" + "COMMIT;"
    )
    connection.execute("INSERT OR REPLACE INTO meta VALUES('workspace', ?)", (str(workspace),))
    return connection
