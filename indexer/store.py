"""The SQLite store of one workspace's index: files, definitions, chunks with FTS5, packed references.

``IndexStore`` holds the connections and transactions, and answers the queries of refresh and
retrieval with the rows of ``indexer.store_rows``; the SQL that writes and deletes one file's rows is
in ``indexer.store_writes``, the term statistics BM25 ranks by in ``indexer.term_statistics``.

Invariants:
* A ``files`` row is written in the same transaction as its symbols and chunks, so a content hash in
  ``files`` means the file's records are complete. A process killed at any moment leaves the last
  committed state (WAL journal); the next refresh completes the rest.
* ``chunks_fts`` has one row per ``chunks`` row, with the same rowid.
* A database of another schema version, or one SQLite cannot read, is deleted and rebuilt
  (``indexer.schema``).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

from indexer.file_rows import FileRows
from indexer.schema import connect, delete_database, open_database
from indexer.store_rows import ChunkRow, DefinitionRow, FileState
from indexer.store_writes import delete_file_rows, insert_file_rows
from indexer.term_statistics import scan_term_counts

log = logging.getLogger(__name__)

# Definitions of this many names are kept for retrieval between writes (common names such as
# ``__init__`` have thousands of definitions, and sorting them is most of a query's cost).
_CACHED_NAMES = 4096
# Pages of WAL between checkpoints in a bulk refresh (SQLite's default is 1,000): fewer checkpoints
# write each page of the growing full-text index back fewer times.
_BULK_CHECKPOINT_PAGES = 16384


class IndexStore:
    """One workspace's database. Writes go through one connection, reads through another (WAL lets
    readers run while a refresh writes); each connection has its own lock, so threads may share a store."""

    def __init__(self, db_path: Path, workspace: Path) -> None:
        self.db_path = db_path
        self.workspace = workspace
        self._write_lock = threading.RLock()
        self._read_lock = threading.Lock()
        self._writer = open_database(db_path, workspace)
        self._reader = self._open_reader()
        self._common_terms: frozenset[str] | None = None
        self._term_counts: dict[str, int] = {}
        self._definitions_cache: OrderedDict[tuple[str, int], list[DefinitionRow]] = OrderedDict()
        self._generation = 0  # commits so far; a query's answer is cached only if none came meanwhile

    def rebuild(self, reason: str) -> None:
        """Deletes the database and starts an empty one (after SQLite reported it damaged)."""
        log.warning("rebuilding index %s: %s", self.db_path, reason)
        self.close()
        delete_database(self.db_path)
        self._writer = open_database(self.db_path, self.workspace)
        self._reader = self._open_reader()
        self._forget_cached_reads()

    def _open_reader(self) -> sqlite3.Connection:
        reader = connect(self.db_path)
        # Document frequencies of FTS terms, so retrieval can drop terms too common to be worth ranking.
        reader.execute("CREATE VIRTUAL TABLE temp.chunks_vocab USING fts5vocab(main, chunks_fts, row)")
        return reader

    def close(self) -> None:
        """Closes both connections."""
        with self._write_lock:
            self._writer.close()
        with self._read_lock:
            self._reader.close()

    # -- writing ---------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction: everything inside commits together or not at all."""
        with self._write_lock:
            self._writer.execute("BEGIN IMMEDIATE")
            try:
                yield
                self._writer.execute("COMMIT")
            except BaseException:
                # SQLite rolls some failures back by itself (a full disk can): then there is nothing to undo.
                if self._writer.in_transaction:
                    self._writer.execute("ROLLBACK")
                raise
            self._forget_cached_reads()

    @contextlib.contextmanager
    def bulk_writes(self) -> Iterator[None]:
        """For a large refresh: no fsync at commits and a checkpoint every 64 MiB of WAL instead of 4.

        A process killed meanwhile still leaves the last committed state (the WAL is written in order);
        only an operating-system crash or power loss can lose it, and a database SQLite then finds
        damaged is rebuilt (``indexer.schema``). It is an index: the files are the truth."""
        with self._write_lock:
            self._writer.execute("PRAGMA synchronous=OFF")
            self._writer.execute(f"PRAGMA wal_autocheckpoint={_BULK_CHECKPOINT_PAGES}")
        try:
            yield
        finally:
            with self._write_lock:
                self._writer.execute("PRAGMA synchronous=NORMAL")
                self._writer.execute("PRAGMA wal_autocheckpoint=1000")

    def _forget_cached_reads(self) -> None:
        """After a commit: answers cached from before it are stale, and so is any query begun before it."""
        with self._read_lock:
            self._definitions_cache.clear()
            self._generation += 1

    def write_file(self, path: str, digest: str, size: int, mtime_ns: int, rows: FileRows) -> None:
        """Replaces a file's records. This and the other writers run inside ``transaction()``."""
        delete_file_rows(self._writer, path)
        self._writer.execute("DELETE FROM skipped WHERE path=?", (path,))
        insert_file_rows(self._writer, path, digest, size, mtime_ns, rows)

    def write_skipped(self, path: str, size: int, mtime_ns: int, reason: str) -> None:
        """Remembers a file skipped for its content, so an unchanged one is not read again."""
        delete_file_rows(self._writer, path)
        self._writer.execute(
            "INSERT OR REPLACE INTO skipped VALUES(?, ?, ?, ?)", (path, size, mtime_ns, reason)
        )

    def update_stat(self, path: str, size: int, mtime_ns: int) -> None:
        """Records a new stat for a file whose content hash did not change."""
        self._writer.execute("UPDATE files SET size=?, mtime_ns=? WHERE path=?", (size, mtime_ns, path))

    def delete_file(self, path: str) -> None:
        """Forgets a file (its records, or its skipped entry)."""
        delete_file_rows(self._writer, path)
        self._writer.execute("DELETE FROM skipped WHERE path=?", (path,))

    # -- reading ---------------------------------------------------------------------------------------

    def query(self, sql: str, parameters: tuple[object, ...] = ()) -> list[tuple]:
        """Rows of a read-only SQL statement, through the reader connection (for tools and benchmarks)."""
        with self._read_lock:
            return self._reader.execute(sql, parameters).fetchall()

    def file_states(self, paths: list[str] | None = None) -> dict[str, FileState]:
        """Indexed files (all, or those of ``paths``) with their hash and stat."""
        rows = self._rows_for_paths("SELECT path, content_hash, size, mtime_ns FROM files", paths)
        return {path: FileState(digest, size, mtime) for path, digest, size, mtime in rows}

    def skipped_states(self, paths: list[str] | None = None) -> dict[str, tuple[int, int, str]]:
        """Files skipped for their content (all, or those of ``paths``): path -> (size, mtime_ns, reason)."""
        rows = self._rows_for_paths("SELECT path, size, mtime_ns, reason FROM skipped", paths)
        return {path: (size, mtime, reason) for path, size, mtime, reason in rows}

    def _rows_for_paths(self, sql: str, paths: list[str] | None) -> list[tuple]:
        if paths is None:
            return self.query(sql)
        rows: list[tuple] = []
        for start in range(0, len(paths), 500):  # SQLite limits the number of parameters
            batch = paths[start : start + 500]
            rows += self.query(f"{sql} WHERE path IN ({','.join('?' * len(batch))})", tuple(batch))
        return rows

    def counts(self) -> dict[str, int]:
        """Rows per table: files, symbols, chunks, skipped."""
        return {
            table: self.query(f"SELECT count(*) FROM {table}")[0][0]
            for table in ("files", "symbols", "chunks", "skipped")
        }

    def definitions_named(self, names: list[str], per_name: int = 40) -> list[DefinitionRow]:
        """Definitions of any of ``names``, at most ``per_name`` of each (top-level ones first, then by
        path and line), grouped by name. Answers are cached per name until the next write."""
        found: dict[str, list[DefinitionRow]] = {}
        with self._read_lock:
            generation = self._generation
            for name in names:
                cached = self._definitions_cache.get((name, per_name))
                if cached is not None:
                    self._definitions_cache.move_to_end((name, per_name))
                    found[name] = cached
        missing = [name for name in dict.fromkeys(names) if name not in found]
        if missing:
            rows = self._query_definitions_named(missing, per_name)
            fetched: dict[str, list[DefinitionRow]] = {name: [] for name in missing}
            for row in rows:
                fetched[row.name].append(row)
            with self._read_lock:
                if self._generation == generation:
                    for name, name_rows in fetched.items():
                        self._definitions_cache[(name, per_name)] = name_rows
                    while len(self._definitions_cache) > _CACHED_NAMES:
                        self._definitions_cache.popitem(last=False)
            found.update(fetched)
        return [row for name in dict.fromkeys(names) for row in found[name]]

    def _query_definitions_named(self, names: list[str], per_name: int) -> list[DefinitionRow]:
        marks = ",".join("?" * len(names))
        rows = self.query(
            "SELECT path, language, name, kind, scope, line, column, node_start_line, node_end_line FROM ("
            " SELECT f.path, f.language, s.name, s.kind, s.scope, s.line, s.column, s.node_start_line,"
            "  s.node_end_line,"
            "  row_number() OVER (PARTITION BY s.name ORDER BY s.scope != '', f.path, s.line) AS n"
            f" FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.name IN ({marks})"
            ") WHERE n <= ?",
            (*names, per_name),
        )
        return [DefinitionRow(*row) for row in rows]

    def definitions_in_modules(self, name: str, stems: list[str]) -> list[DefinitionRow]:
        """Definitions of ``name`` in the files that path stems name (``pkg/mod`` -> ``.../pkg/mod.*``;
        a folder stem ``pkg/`` -> ``.../pkg/*``, nested files included: callers filter)."""
        patterns = [
            pattern
            for stem in stems
            if stem
            for pattern in (
                (f"{stem}*", f"*/{stem}*") if stem.endswith("/") else (f"{stem}.*", f"*/{stem}.*")
            )
        ]
        if not patterns:
            return []
        where = " OR ".join("f.path GLOB ?" for _ in patterns)
        rows = self.query(
            "SELECT f.path, f.language, s.name, s.kind, s.scope, s.line, s.column, s.node_start_line,"
            " s.node_end_line"
            f" FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.name = ? AND ({where}) LIMIT 20",
            (name, *patterns),
        )
        return [DefinitionRow(*row) for row in rows]

    def chunk_containing(self, path: str, line: int) -> ChunkRow | None:
        """The smallest chunk of ``path`` that holds ``line``."""
        rows = self.query(
            "SELECT c.id, f.path, c.start_line, c.end_line, c.kind, c.name, c.text FROM chunks c"
            " JOIN files f ON f.id = c.file_id WHERE f.path=? AND c.start_line<=? AND c.end_line>=?"
            " ORDER BY c.end_line - c.start_line LIMIT 1",
            (path, line, line),
        )
        return ChunkRow(*rows[0]) if rows else None

    def common_terms(self) -> frozenset[str] | None:
        """Terms in more than ``COMMON_TERM_SHARE`` of the chunks (``indexer.term_statistics``), as of
        the last ``compute_common_terms()``; None before the first."""
        return self._common_terms

    def compute_common_terms(self) -> None:
        """Finds the terms too common to rank by, and keeps the chunk counts of the terms in more than
        ``TERM_COUNT_FLOOR`` chunks (``indexer.term_statistics``); retrieval is not held up meanwhile."""
        self._term_counts, self._common_terms = scan_term_counts(self.db_path)

    def term_counts(self) -> dict[str, int]:
        """Lower-cased term -> chunks holding it, for the terms in more than ``TERM_COUNT_FLOOR`` chunks,
        as of the last ``compute_common_terms()`` (empty before the first)."""
        return self._term_counts

    def term_document_counts(self, terms: list[str]) -> tuple[dict[str, int], int]:
        """How many chunks hold each term (lower-cased, as the index stores them), and about how many
        chunks there are in all."""
        if not terms:
            return {}, 0
        lowered = sorted({term.lower() for term in terms})
        marks = ",".join("?" * len(lowered))
        rows = self.query(f"SELECT term, doc FROM temp.chunks_vocab WHERE term IN ({marks})", tuple(lowered))
        total = self.query("SELECT coalesce(max(id), 0) FROM chunks")[0][0]
        return dict(rows), total

    def search_chunks(self, terms: list[str], limit: int) -> list[tuple[ChunkRow, float]]:
        """Chunks ranked by BM25 against any of ``terms`` (best first), with FTS5's score negated."""
        if not terms:
            return []
        match = " OR ".join('"' + term.replace('"', "") + '"' for term in terms)
        # Ranking first and joining after keeps SQLite from computing bm25 again in an outer query.
        ranked = self.query(
            "SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?",
            (match, limit),
        )
        if not ranked:
            return []
        marks = ",".join("?" * len(ranked))
        rows = self.query(
            "SELECT c.id, f.path, c.start_line, c.end_line, c.kind, c.name, c.text FROM chunks c"
            f" JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
            tuple(rowid for rowid, _ in ranked),
        )
        by_id = {row[0]: ChunkRow(*row) for row in rows}
        return [(by_id[rowid], -rank) for rowid, rank in ranked if rowid in by_id]

    def file_language(self, path: str) -> str | None:
        """The stored language of a file, None when it is not indexed."""
        rows = self.query("SELECT language FROM files WHERE path=?", (path,))
        return rows[0][0] if rows else None
