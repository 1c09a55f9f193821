"""Syntax-aware chunks: whole definitions where they fit, statement runs otherwise, line windows last.

A definition node (the language's ``chunk_types``) that fits the size limits becomes one chunk, with
the comments right above it. One too large is opened and its children are grouped: nested definitions
become chunks of their own, and runs of statements are cut at statement boundaries when they would
exceed the limits. Runs carry across nesting levels, so a large function's header lands in the chunk
of its first statements instead of a chunk of its own. Files without a grammar get line windows.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from indexer.positions import LineIndex
from indexer.records import Chunk, Tag

if TYPE_CHECKING:
    import tree_sitter

    from indexer.languages import LanguageSpec


@dataclass(frozen=True)
class ChunkLimits:
    """The largest chunk, in lines and in bytes (about a quarter of that in model tokens)."""

    max_lines: int = 60
    max_bytes: int = 2400
    window_lines: int = 40


@dataclass
class _Run:
    """Consecutive sibling nodes waiting to become one "block" chunk."""

    nodes: list[tree_sitter.Node] = field(default_factory=list)


class TreeChunker:
    """Splits one parsed file into ``Chunk`` records (sorted by start line, covering its code)."""

    def __init__(self, spec: LanguageSpec, lines: LineIndex, tags: list[Tag], limits: ChunkLimits) -> None:
        self.spec = spec
        self.lines = lines
        self.limits = limits
        self.definitions = [tag for tag in tags if tag.is_definition]
        self._definition_starts = [tag.start_byte for tag in self.definitions]
        self.chunks: list[Chunk] = []

    def chunk(self, tree: tree_sitter.Tree) -> list[Chunk]:
        """The chunks of ``tree``."""
        self._flush(self._visit(tree.root_node))
        self.chunks.sort(key=lambda chunk: (chunk.start_line, chunk.end_line))
        return self.chunks

    def _visit(self, root: tree_sitter.Node) -> _Run:
        """Visits the nodes under ``root`` depth-first, threading one open run through them; returns
        the run left open at the end. The walk keeps its own stack of children, so a generated file
        nested thousands of levels deep cannot exhaust Python's recursion limit."""
        run = _Run()
        stack = [iter(root.children)]
        while stack:
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
                continue
            if self._fits(child.start_point[0], child.end_point[0], child.start_byte, child.end_byte):
                if child.type in self.spec.chunk_types:
                    docs = self._take_doc_comments(run, child)
                    self._flush(run)
                    run = _Run()
                    self._emit_definition(child, docs)
                    continue
                if run.nodes and not self._fits(
                    run.nodes[0].start_point[0], child.end_point[0], run.nodes[0].start_byte, child.end_byte
                ):
                    self._flush(run)
                    run = _Run()
                run.nodes.append(child)
            elif child.child_count > 0:
                stack.append(iter(child.children))
            else:
                # One token too large to cut at syntax (a huge string literal): line windows.
                self._flush(run)
                run = _Run()
                self._emit_windows(child.start_point[0], child.end_point[0])
        return run

    def _fits(self, start_line: int, end_line: int, start_byte: int, end_byte: int) -> bool:
        return (
            end_line - start_line < self.limits.max_lines and end_byte - start_byte <= self.limits.max_bytes
        )

    def _take_doc_comments(self, run: _Run, definition: tree_sitter.Node) -> list[tree_sitter.Node]:
        """Pops the comments directly above ``definition`` off the end of ``run``."""
        docs: list[tree_sitter.Node] = []
        next_line = definition.start_point[0]
        while run.nodes and "comment" in run.nodes[-1].type and run.nodes[-1].end_point[0] >= next_line - 1:
            comment = run.nodes.pop()
            if not self._fits(
                comment.start_point[0], definition.end_point[0], comment.start_byte, definition.end_byte
            ):
                run.nodes.append(comment)
                break
            docs.insert(0, comment)
            next_line = comment.start_point[0]
        return docs

    def _emit_definition(self, node: tree_sitter.Node, docs: list[tree_sitter.Node]) -> None:
        start_line = docs[0].start_point[0] if docs else node.start_point[0]
        definition = self._outermost_definition(node)
        if definition is None:
            self._emit(start_line, node.end_point[0], "block", "")
        else:
            self._emit(start_line, node.end_point[0], definition.kind, definition.qualified_name)

    def _outermost_definition(self, node: tree_sitter.Node) -> Tag | None:
        index = bisect.bisect_left(self._definition_starts, node.start_byte)
        # The definition must start where the node does: a namespace is not its first class.
        if (
            index < len(self.definitions)
            and self.definitions[index].start_byte < node.end_byte
            and self.definitions[index].node_start_line == node.start_point[0]
        ):
            return self.definitions[index]
        return None

    def _flush(self, run: _Run) -> None:
        if run.nodes:
            self._emit(run.nodes[0].start_point[0], run.nodes[-1].end_point[0], "block", "")

    def _emit_windows(self, start_line: int, end_line: int) -> None:
        step = self.limits.window_lines
        for first in range(start_line, end_line + 1, step):
            self._emit(first, min(first + step - 1, end_line), "window", "")

    def _emit(self, start_line: int, end_line: int, kind: str, name: str) -> None:
        start_byte = self.lines.line_start(start_line)
        end_byte = self.lines.line_end(end_line)
        text = self.lines.data[start_byte:end_byte].decode("utf-8", "replace")
        if len(text.strip()) < 3 or not any(character.isalnum() for character in text):
            return  # a closing brace or a blank run says nothing worth retrieving
        self.chunks.append(Chunk(start_line, end_line, start_byte, end_byte, kind, name, text))


def line_window_chunks(lines: LineIndex, limits: ChunkLimits) -> list[Chunk]:
    """Fixed line windows, for files without a grammar."""
    chunks: list[Chunk] = []
    step = limits.window_lines
    for first in range(0, lines.line_count, step):
        last = min(first + step, lines.line_count) - 1
        start_byte, end_byte = lines.line_start(first), lines.line_end(last)
        text = lines.data[start_byte:end_byte].decode("utf-8", "replace")
        if text.strip():
            chunks.append(Chunk(first, last, start_byte, end_byte, "window", "", text))
    return chunks
