"""The rows the index store answers with: a file's state, a definition found by name, a chunk."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FileState:
    """What the store knows of a file without reading its records."""

    content_hash: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class DefinitionRow:
    """A definition found by name, with the file it is in and that file's language."""

    path: str
    language: str
    name: str
    kind: str
    scope: str
    line: int
    column: int
    node_start_line: int
    node_end_line: int


@dataclass(frozen=True)
class ChunkRow:
    """A chunk as stored, with its file's path."""

    chunk_id: int
    path: str
    start_line: int
    end_line: int
    kind: str
    name: str
    text: str
