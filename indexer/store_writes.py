"""The SQL that writes one file's records into the index database and deletes them again.

``insert_file_rows`` writes a ``files`` row, its definitions into ``symbols``, and its chunks into
``chunks`` and ``chunks_fts`` (one FTS row per chunk, with the chunk's rowid);
``delete_file_rows`` removes all of them. Both run inside the caller's transaction
(``IndexStore.transaction()``), so a file's records are written or removed together.
"""

from __future__ import annotations

import sqlite3
import time

from indexer.file_rows import FileRows


def insert_file_rows(
    writer: sqlite3.Connection, path: str, digest: str, size: int, mtime_ns: int, rows: FileRows
) -> None:
    """Writes a file's ``files`` row (with its packed references), definitions and chunks; the file
    must have no rows yet (see ``delete_file_rows``).

    Chunks get explicit ids, the ones SQLite would pick (one past the largest), so that the chunks
    and their full-text rows go in as two ``executemany`` calls instead of two statements a chunk."""
    file_id = writer.execute(
        "INSERT INTO files(path, content_hash, language, size, mtime_ns, indexed_at, references_blob)"
        " VALUES(?, ?, ?, ?, ?, ?, ?)",
        (path, digest, rows.language, size, mtime_ns, time.time(), rows.references_blob),
    ).lastrowid
    writer.executemany(
        "INSERT INTO symbols VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(file_id, *symbol) for symbol in rows.symbols],
    )
    if not rows.chunks:
        return
    first_id = writer.execute("SELECT coalesce(max(id), 0) + 1 FROM chunks").fetchone()[0]
    writer.executemany(
        "INSERT INTO chunks(id, file_id, start_line, end_line, start_byte, end_byte, kind, name, text)"
        " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(first_id + n, file_id, *chunk) for n, chunk in enumerate(rows.chunks)],
    )
    writer.executemany(
        "INSERT INTO chunks_fts(rowid, terms) VALUES(?, ?)",
        [(first_id + n, terms) for n, terms in enumerate(rows.terms)],
    )


def delete_file_rows(writer: sqlite3.Connection, path: str) -> None:
    """Deletes a file's ``files`` row with its symbols, chunks and FTS rows (nothing if it has none)."""
    row = writer.execute("SELECT id FROM files WHERE path=?", (path,)).fetchone()
    if row is None:
        return
    file_id = row[0]
    writer.execute(
        "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE file_id=?)",
        (file_id,),
    )
    writer.execute("DELETE FROM chunks WHERE file_id=?", (file_id,))
    writer.execute("DELETE FROM symbols WHERE file_id=?", (file_id,))
    writer.execute("DELETE FROM files WHERE id=?", (file_id,))
