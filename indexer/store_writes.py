"""The SQL that writes one file's records into the index database and deletes them again.

``insert_file_rows`` writes a ``files`` row, its definitions into ``symbols``, and its chunks into
``chunks`` and ``chunks_fts`` (one FTS row per chunk, with the chunk's rowid);
``delete_file_rows`` removes all of them. Both run inside the caller's transaction
(``IndexStore.transaction()``), so a file's records are written or removed together.
"""

from __future__ import annotations

import sqlite3
import time

from indexer.analysis import FileAnalysis
from indexer.records import pack_tags
from indexer.terms import index_terms


def insert_file_rows(
    writer: sqlite3.Connection, path: str, digest: str, size: int, mtime_ns: int, analysis: FileAnalysis
) -> None:
    """Writes a file's ``files`` row (with its packed references), definitions and chunks; the file
    must have no rows yet (see ``delete_file_rows``)."""
    references = [tag for tag in analysis.tags if not tag.is_definition]
    cursor = writer.execute(
        "INSERT INTO files(path, content_hash, language, size, mtime_ns, indexed_at, references_blob)"
        " VALUES(?, ?, ?, ?, ?, ?, ?)",
        (path, digest, analysis.language, size, mtime_ns, time.time(), pack_tags(references)),
    )
    file_id = cursor.lastrowid
    writer.executemany(
        "INSERT INTO symbols VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                file_id,
                tag.name,
                tag.kind,
                tag.scope,
                tag.start_byte,
                tag.end_byte,
                tag.line,
                tag.column,
                tag.node_start_line,
                tag.node_end_line,
            )
            for tag in analysis.tags
            if tag.is_definition
        ],
    )
    for chunk in analysis.chunks:
        chunk_id = writer.execute(
            "INSERT INTO chunks(file_id, start_line, end_line, start_byte, end_byte, kind, name, text)"
            " VALUES(?, ?, ?, ?, ?, ?, ?, ?)",
            (
                file_id,
                chunk.start_line,
                chunk.end_line,
                chunk.start_byte,
                chunk.end_byte,
                chunk.kind,
                chunk.name,
                chunk.text,
            ),
        ).lastrowid
        writer.execute(
            "INSERT INTO chunks_fts(rowid, terms) VALUES(?, ?)", (chunk_id, index_terms(chunk.text))
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
