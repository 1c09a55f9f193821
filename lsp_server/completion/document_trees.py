"""The last syntax tree of each open document, so a keystroke re-parses only what it changed."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from lsp_server.completion.postprocess.context import CursorContext
from lsp_server.completion.syntax import MAX_PARSE_CHARS, encode, language_spec, parse, replaced

if TYPE_CHECKING:
    import tree_sitter

    from indexer.languages import LanguageSpec


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix (by halving: each comparison is one memcmp)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """Length of the longest common suffix, at most ``limit``."""
    low, high = 0, min(limit, len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle : len(a) - low] == b[len(b) - middle : len(b) - low]:
            low = middle
        else:
            high = middle - 1
    return low


class DocumentTrees:
    """Per document: its text as last parsed and its tree. A new text is compared with the old one,
    the changed span is applied to the old tree (``Tree.edit``) and the parser re-uses every node
    outside it: a keystroke in a 120k-character file costs a millisecond or two instead of a full
    parse. Safe to call from several threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._trees: dict[str, tuple[LanguageSpec, bytes, tree_sitter.Tree]] = {}

    def tree(self, uri: str, spec: LanguageSpec, source: bytes) -> tree_sitter.Tree:
        """The tree of ``source``, re-parsed from the document's previous tree when there is one."""
        with self._lock:
            previous = self._trees.get(uri)
        if previous is None or previous[0] is not spec:
            tree = parse(spec, source)
        else:
            old_source, old_tree = previous[1], previous[2]
            if old_source == source:
                return old_tree
            start = _common_prefix(old_source, source)
            tail = _common_suffix(old_source, source, min(len(old_source), len(source)) - start)
            new = source[start : len(source) - tail]
            tree = replaced(spec, old_tree, old_source, start, len(old_source) - tail, new)
        with self._lock:
            self._trees[uri] = (spec, source, tree)
        return tree

    def cursor_context(self, uri: str, text: str, offset: int, language: str | None) -> CursorContext:
        """The document split at ``offset``, with its syntax tree when its language has a grammar and
        it is no longer than ``MAX_PARSE_CHARS``."""
        prefix, suffix = text[:offset], text[offset:]
        spec = language_spec(language)
        if spec is None or len(text) > MAX_PARSE_CHARS:
            return CursorContext(prefix, suffix, language)
        context = CursorContext(prefix, suffix, language, tree=self.tree(uri, spec, encode(text)))
        _ = context.syntax  # built here, in the caller's thread, not later on the event loop
        return context

    def forget(self, uri: str) -> None:
        """Drops a closed document's tree."""
        with self._lock:
            self._trees.pop(uri, None)
