"""One file's bytes in, its language, tags and chunks out: the pure step of indexing."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from indexer.chunker import ChunkLimits, TreeChunker, line_window_chunks
from indexer.languages import LANGUAGES, language_for_path
from indexer.positions import LineIndex
from indexer.records import Chunk, Tag
from indexer.tags import TagsExtractor

if TYPE_CHECKING:
    import tree_sitter

    from indexer.languages import LanguageSpec


@dataclass(frozen=True)
class FileAnalysis:
    """What indexing one file produced. ``text`` is the decoded source the positions refer to."""

    language: str
    text: str
    tags: list[Tag]
    chunks: list[Chunk]


class _ThreadTools(threading.local):
    """Parsers and query cursors are not thread-safe: the watcher thread gets its own."""

    def __init__(self) -> None:
        self.parsers: dict[str, tree_sitter.Parser] = {}
        self.extractors: dict[str, TagsExtractor] = {}


_TOOLS = _ThreadTools()


def decode_source(data: bytes) -> tuple[str, bytes]:
    """The text of a file and the UTF-8 bytes positions count in: invalid UTF-8 decodes with U+FFFD."""
    try:
        return data.decode("utf-8"), data
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        return text, text.encode("utf-8")


def analyze(path: str, data: bytes, limits: ChunkLimits | None = None) -> FileAnalysis:
    """Parses one file (its language from ``path``'s extension) into tags and chunks."""
    limits = limits or ChunkLimits()
    text, data = decode_source(data)
    lines = LineIndex(data)
    spec = language_for_path(path)
    if spec is None:
        return FileAnalysis("text", text, [], line_window_chunks(lines, limits))
    tree = _parser(spec).parse(data)
    tags = _extractor(spec).extract(tree, lines)
    chunks = TreeChunker(spec, lines, tags, limits).chunk(tree)
    return FileAnalysis(spec.name, text, tags, chunks)


def _parser(spec: LanguageSpec) -> tree_sitter.Parser:
    parser = _TOOLS.parsers.get(spec.name)
    if parser is None:
        import tree_sitter

        parser = _TOOLS.parsers[spec.name] = tree_sitter.Parser(spec.language())
    return parser


def _extractor(spec: LanguageSpec) -> TagsExtractor:
    extractor = _TOOLS.extractors.get(spec.name)
    if extractor is None:
        extractor = _TOOLS.extractors[spec.name] = TagsExtractor(LANGUAGES[spec.name])
    return extractor
