"""Where other files of the workspace name a symbol, from the index's references, checked against
the files as they are now (an open editor's text, else the disk): an index older than the file
never yields a position that no longer holds the name."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from indexer.positions import utf16_column, utf16_length
from indexer.records import Tag, unpack_tags

if TYPE_CHECKING:
    from indexer.store import IndexStore

MAX_FILES = 200
"""Files read for one symbol at most: a name that common is no symbol worth following."""


@dataclass(frozen=True)
class NameAt:
    """A name in another file: its path, line and UTF-16 columns, and the index's tag kind."""

    path: str
    line: int
    start_column: int
    end_column: int
    kind: str


def references_elsewhere(
    store: IndexStore,
    defining_path: str,
    name: str,
    kinds: frozenset[str] | None = None,
    open_texts: Mapping[str, str] | None = None,
) -> list[NameAt]:
    """References to ``name`` (of ``kinds``, any when None) in files other than ``defining_path``
    that import from it (they mention its module's name) and define no ``name`` of their own at
    their top level; by path, then position."""
    module = re.compile(rb"\b" + re.escape(PurePosixPath(defining_path).stem.encode()) + rb"\b")
    encoded = name.encode()
    rows = store.query(
        "SELECT path, references_blob FROM files WHERE path != ? AND instr(references_blob, ?) > 0"
        " ORDER BY path LIMIT ?",
        (defining_path, encoded, MAX_FILES),
    )
    own_definitions = {row.path for row in store.definitions_named([name], MAX_FILES) if not row.scope}
    found: list[NameAt] = []
    for path, blob in rows:
        tags = [tag for tag in unpack_tags(blob) if tag.name == name]
        if not tags or path in own_definitions:
            continue
        data = _current_bytes(store, path, open_texts)
        if data is None or module.search(data) is None:
            continue
        found.extend(_checked(path, data, tags, encoded, kinds))
    return found


def _checked(
    path: str, data: bytes, tags: list[Tag], name: bytes, kinds: frozenset[str] | None
) -> list[NameAt]:
    width = utf16_length(name.decode())
    found = []
    for tag in tags:
        if tag.is_definition or (kinds is not None and tag.kind not in kinds):
            continue
        if data[tag.start_byte : tag.end_byte] != name:
            continue
        # Positions from the text as it is now, which may differ from the indexed one before the tag.
        line_start = data.rfind(b"\n", 0, tag.start_byte) + 1
        column = utf16_column(data[line_start : tag.start_byte])
        found.append(NameAt(path, data.count(b"\n", 0, tag.start_byte), column, column + width, tag.kind))
    return found


def _current_bytes(store: IndexStore, path: str, open_texts: Mapping[str, str] | None) -> bytes | None:
    if open_texts is not None and path in open_texts:
        return open_texts[path].encode("utf-8", "surrogatepass")
    try:
        return (store.workspace / path).read_bytes()
    except OSError:
        return None
