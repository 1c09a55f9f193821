"""The retriever interface: a query at a cursor in, ranked snippets out, within a time budget."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from indexer.store import IndexStore


@dataclass(frozen=True)
class RetrievalQuery:
    """A cursor in a document, as the editor sees it.

    ``path`` is relative to the workspace (with "/"), ``text`` the document's current (maybe unsaved)
    content, ``line`` 0-based and ``column`` in UTF-16 code units, as LSP positions are. The lines
    ``line - own_lines_before`` .. ``line + own_lines_after`` are the cursor's own region, which the
    prompt carries anyway: no snippet overlaps it.
    """

    path: str
    text: str
    line: int
    column: int
    own_lines_before: int = 40
    own_lines_after: int = 10


@dataclass(frozen=True)
class Snippet:
    """Code retrieval offers: lines ``start_line``..``end_line`` (0-based, inclusive) of ``path``."""

    path: str
    start_line: int
    end_line: int
    text: str
    sources: tuple[str, ...]
    score: float

    def overlaps(self, other: Snippet) -> bool:
        """Same file and at least one line in common."""
        return (
            self.path == other.path
            and self.start_line <= other.end_line
            and other.start_line <= self.end_line
        )


class CancelToken(Protocol):
    """Anything with ``is_set()``: a ``threading.Event`` will do."""

    def is_set(self) -> bool: ...


class NeverCancelled:
    """The cancel token of a call nobody cancels."""

    def is_set(self) -> bool:
        return False


@dataclass
class RetrievalContext:
    """What every retriever gets: the store, the query, the cursor as a character offset, the recently
    edited documents (path, text), and when to stop."""

    store: IndexStore
    query: RetrievalQuery
    cursor_offset: int
    recent_documents: Sequence[tuple[str, str]] = ()
    deadline: float = field(default_factory=lambda: time.monotonic() + 0.05)
    cancel: CancelToken = field(default_factory=NeverCancelled)

    def should_stop(self) -> bool:
        """True once the time budget is spent or the caller cancelled."""
        return self.cancel.is_set() or time.monotonic() >= self.deadline

    def prefix_window(self, lines_before: int) -> str:
        """The text from ``lines_before`` lines above the cursor up to the cursor."""
        text = self.query.text
        start = self.cursor_offset
        for _ in range(lines_before + 1):
            start = text.rfind("\n", 0, start)
            if start == -1:
                break
        return text[start + 1 : self.cursor_offset]

    def suffix_window(self, lines_after: int) -> str:
        """The text from the cursor to ``lines_after`` lines below it."""
        text = self.query.text
        end = self.cursor_offset
        for _ in range(lines_after + 1):
            end = text.find("\n", end + 1)
            if end == -1:
                return text[self.cursor_offset :]
        return text[self.cursor_offset : end]

    def in_own_region(self, snippet: Snippet) -> bool:
        """Whether a snippet overlaps the lines around the cursor that the prompt already holds."""
        query = self.query
        return (
            snippet.path == query.path
            and snippet.start_line <= query.line + query.own_lines_after
            and snippet.end_line >= query.line - query.own_lines_before
        )


class Retriever(Protocol):
    """One source of snippets. ``retrieve`` returns at most ``limit`` snippets, best first, and returns
    early (with what it has) when ``context.should_stop()``."""

    name: str

    def retrieve(self, context: RetrievalContext, limit: int) -> list[Snippet]: ...
