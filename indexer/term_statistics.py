"""Statistics of the terms in the chunks' full-text index, for BM25: how many chunks hold a term,
and which terms are too common to rank by."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from indexer.schema import connect

# A term in more than this share of the chunks is too common for BM25 to rank by.
COMMON_TERM_SHARE = 0.01
# Document counts are kept in memory for the terms in more chunks than this (the others count as this).
TERM_COUNT_FLOOR = 50


def too_common(counts: Mapping[str, int], total_chunks: int) -> frozenset[str]:
    """The terms of ``counts`` (term -> chunks holding it) in more than ``COMMON_TERM_SHARE`` of
    ``total_chunks`` (and in more than 50 chunks in any case)."""
    ceiling = max(50, int(total_chunks * COMMON_TERM_SHARE))
    return frozenset(term for term, count in counts.items() if count > ceiling)


def scan_term_counts(db_path: Path) -> tuple[dict[str, int], frozenset[str]]:
    """The chunk counts of the terms in more than ``TERM_COUNT_FLOOR`` chunks, and the terms too common
    to rank by: a scan of the FTS vocabulary (a few hundred ms on a large index), through a connection
    of its own so retrieval is not held up meanwhile."""
    connection = connect(db_path)
    try:
        # One pass over the vocabulary: a page cache would only hold pages never read again.
        connection.execute("PRAGMA cache_size=-2048")
        connection.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, chunks_fts, row)")
        total = connection.execute("SELECT count(*) FROM chunks").fetchone()[0]
        rows = connection.execute(
            "SELECT term, doc FROM temp.vocab WHERE doc > ?", (TERM_COUNT_FLOOR,)
        ).fetchall()
    finally:
        connection.close()
    counts = dict(rows)
    return counts, too_common(counts, total)
