"""Windows of recently edited or open documents that look like the code before the cursor."""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass

from indexer.retrieval.base import RetrievalContext, Snippet
from indexer.terms import STOP_WORDS, identifiers


def identifier_set(text: str) -> frozenset[str]:
    """The distinct meaningful identifiers of ``text``."""
    names = set(identifiers(text)) - STOP_WORDS  # the lower-case keywords go cheaply, before the loop
    return frozenset(name for name in names if len(name) > 1 and name.lower() not in STOP_WORDS)


@dataclass(frozen=True)
class _DocumentWindows:
    """A document's lines and its windows' (first line, last line, identifier set)."""

    lines: list[str]
    windows: list[tuple[int, int, frozenset[str]]]

    def text(self, first: int, last: int) -> str:
        return "\n".join(self.lines[first : last + 1]) + "\n"


class RecentWindowsRetriever:
    """Jaccard similarity of identifier sets between the lines before the cursor and sliding windows
    of the recently edited documents (what Copilot calls neighbouring tabs)."""

    name = "recent"

    def __init__(self, window_lines: int = 20, stride: int = 10, min_similarity: float = 0.1) -> None:
        if window_lines % stride:
            raise ValueError(f"window_lines ({window_lines}) must be a multiple of stride ({stride})")
        self.window_lines = window_lines
        self.stride = stride
        self.min_similarity = min_similarity
        # Recent documents change far less often than the cursor moves: their windows are kept.
        self._windows: dict[tuple[str, str], _DocumentWindows] = {}
        self._windows_lock = threading.Lock()

    def prepare(self, path: str, text: str) -> None:
        """Computes a document's windows ahead of a query (when it changes, not when the user waits)."""
        self._document_windows(path, text)

    def _document_windows(self, path: str, text: str) -> _DocumentWindows:
        key = (path, text)
        with self._windows_lock:
            cached = self._windows.get(key)
        if cached is None:
            lines = text.split("\n")
            # Identifiers are collected once per stride of lines; a window is the union of its strides.
            strides = [
                identifier_set("\n".join(lines[first : first + self.stride]))
                for first in range(0, len(lines), self.stride)
            ]
            per_window = self.window_lines // self.stride
            windows: list[tuple[int, int, frozenset[str]]] = []
            for index in range(len(strides)):
                first = index * self.stride
                last = min(first + self.window_lines, len(lines)) - 1
                windows.append((first, last, frozenset().union(*strides[index : index + per_window])))
                if last == len(lines) - 1:
                    break
            cached = _DocumentWindows(lines, windows)
            with self._windows_lock:
                if len(self._windows) >= 32:
                    self._windows.pop(next(iter(self._windows)))
                self._windows[key] = cached
        return cached

    def retrieve(self, context: RetrievalContext, limit: int) -> list[Snippet]:
        wanted = identifier_set(context.prefix_window(self.window_lines))
        if not wanted:
            return []
        # (similarity, path, first line, last line); snippets and their text only for the winners.
        scored: list[tuple[float, str, int, int]] = []
        documents: dict[str, _DocumentWindows] = {}
        for path, text in context.recent_documents:
            if context.should_stop():
                break
            document = documents[path] = self._document_windows(path, text)
            for first, last, found in document.windows:
                shared = len(wanted & found)
                if not shared:
                    continue
                similarity = shared / (len(wanted) + len(found) - shared)
                if similarity >= self.min_similarity:
                    scored.append((similarity, path, first, last))
        scored.sort(key=lambda entry: -entry[0])
        # Overlapping windows of one file say the same thing twice: keep the best of each cluster.
        kept: list[Snippet] = []
        for similarity, path, first, last in scored:
            candidate = Snippet(path, first, last, "", (self.name,), similarity)
            if context.in_own_region(candidate) or any(candidate.overlaps(other) for other in kept):
                continue
            kept.append(dataclasses.replace(candidate, text=documents[path].text(first, last)))
            if len(kept) == limit:
                break
        return kept
