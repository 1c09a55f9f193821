"""One analysed file as the rows the store writes, built where the file was parsed.

A large refresh parses in worker processes and writes from one: everything that can be computed
without the database (the full-text terms of each chunk, the packed references, the symbol rows)
is computed in the worker, so the writing process only runs SQL, and the source text itself never
travels back between the processes.
"""

from __future__ import annotations

from dataclasses import dataclass

from indexer.analysis import FileAnalysis
from indexer.records import pack_tags
from indexer.terms import index_terms

SymbolRow = tuple[str, str, str, int, int, int, int, int, int]
"""A ``symbols`` row without its file id: name, kind, scope, start_byte, end_byte, line, column,
node_start_line, node_end_line."""

ChunkRow = tuple[int, int, int, int, str, str, str]
"""A ``chunks`` row without its ids: start_line, end_line, start_byte, end_byte, kind, name, text."""


@dataclass(frozen=True)
class FileRows:
    """What the store writes for one file. ``terms[i]`` is the full-text entry of ``chunks[i]``."""

    language: str
    references_blob: bytes
    symbols: list[SymbolRow]
    chunks: list[ChunkRow]
    terms: list[str]


def file_rows(analysis: FileAnalysis) -> FileRows:
    """The rows of an analysed file: its definitions as symbols, its references packed, its chunks
    with their index terms."""
    symbols: list[SymbolRow] = []
    references = []
    for tag in analysis.tags:
        if tag.is_definition:
            symbols.append(
                (
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
            )
        else:
            references.append(tag)
    chunks: list[ChunkRow] = [
        (c.start_line, c.end_line, c.start_byte, c.end_byte, c.kind, c.name, c.text) for c in analysis.chunks
    ]
    terms = [index_terms(chunk.text) for chunk in analysis.chunks]
    return FileRows(analysis.language, pack_tags(references), symbols, chunks, terms)
