"""Definitions of the identifiers near the cursor, resolved through the file's imports where possible."""

from __future__ import annotations

import posixpath
import re

from indexer.languages import language_name_for_path
from indexer.retrieval.base import RetrievalContext, Snippet
from indexer.retrieval.imports import imported_paths, path_matches_stem
from indexer.store_rows import DefinitionRow
from indexer.terms import query_terms

# Kinds worth showing a model: code it may call or build. Constants and variables rank lower.
_KIND_WEIGHT = {"function": 1.0, "method": 1.0, "class": 1.0, "interface": 1.0, "type": 0.9, "module": 0.5}
_PER_NAME = 4
# Languages that call each other's definitions; a definition in any other language is a weak guess.
_LANGUAGE_FAMILY = {"javascript": "js", "typescript": "js", "tsx": "js", "c": "c", "cpp": "c"}
_QUALIFIED = re.compile(r"\b([A-Za-z_][\w.]*)\.([A-Za-z_]\w*)")
_CALLED = re.compile(r"([A-Za-z_]\w*)\s*\(")


class DefinitionsRetriever:
    """The chunks defining the names used just before the cursor, nearest names first.

    A definition in the module a name is imported from outranks others of the same name; among the
    rest, definitions in the cursor's folder come first.
    """

    name = "definitions"

    def __init__(self, lines_before: int = 12, max_names: int = 16, resolve_imports: bool = True) -> None:
        self.lines_before = lines_before
        self.max_names = max_names
        self.resolve_imports = resolve_imports

    def retrieve(self, context: RetrievalContext, limit: int) -> list[Snippet]:
        window = context.prefix_window(self.lines_before) + _current_word_tail(context)
        # Called and qualified names are looked up even when they are also keywords somewhere (`re.match`).
        used = {match.group(2) for match in _QUALIFIED.finditer(window)}
        used.update(_CALLED.findall(window))
        used.update(re.findall(r"\w+$", window))
        names = query_terms(window, self.max_names, keep=frozenset(used))
        if not names or context.should_stop():
            return []
        imports = imported_paths(context.query.text, context.query.path) if self.resolve_imports else {}
        qualified = _module_qualified_stems(window, imports)
        by_name: dict[str, list[DefinitionRow]] = {}
        for row in context.store.definitions_named(names):
            by_name.setdefault(row.name, []).append(row)
        # A common name has more definitions than the per-name cap: fetch the imported one directly.
        for name in names:
            stems = imports.get(name, []) + qualified.get(name, [])
            if stems:
                known = set(by_name.get(name, []))
                extra = [
                    row
                    for row in context.store.definitions_in_modules(name, stems)
                    if row not in known and any(path_matches_stem(row.path, stem) for stem in stems)
                ]
                by_name.setdefault(name, []).extend(extra)
        folder = posixpath.dirname(context.query.path)
        family = _family(language_name_for_path(context.query.path))
        scored: list[tuple[float, DefinitionRow]] = []
        for rank, name in enumerate(names):
            stems = imports.get(name, []) + qualified.get(name, [])
            candidates = sorted(
                (
                    (_definition_score(row, stems, folder, family) / (1 + rank), row)
                    for row in by_name.get(name, [])
                ),
                key=lambda pair: -pair[0],
            )
            scored.extend(candidates[:_PER_NAME])
        scored.sort(key=lambda pair: -pair[0])  # stable: ties keep the nearer name first
        # Chunks are looked up lazily, best first, so a query costs about ``limit`` lookups.
        snippets: list[Snippet] = []
        seen_chunks: set[int] = set()
        for score, row in scored:
            if len(snippets) == limit or context.should_stop():
                break
            chunk = context.store.chunk_containing(row.path, row.line)
            if chunk is None or chunk.chunk_id in seen_chunks:
                continue
            seen_chunks.add(chunk.chunk_id)
            snippet = Snippet(chunk.path, chunk.start_line, chunk.end_line, chunk.text, (self.name,), score)
            if not context.in_own_region(snippet):
                snippets.append(snippet)
        return snippets


def _module_qualified_stems(window: str, imports: dict[str, list[str]]) -> dict[str, list[str]]:
    """For ``module.name`` uses of an imported module: name -> the module's path stems."""
    found: dict[str, list[str]] = {}
    for match in _QUALIFIED.finditer(window):
        qualifier, name = match.group(1), match.group(2)
        head = qualifier.split(".")[0]
        if head not in imports:
            continue
        stems = found.setdefault(name, [])
        if "." in qualifier:  # `import a.b` then `a.b.name(`
            dotted = qualifier.replace(".", "/")
            stems.extend([dotted, f"{dotted}/__init__"])
        else:
            stems.extend(imports[head])
    return found


def _current_word_tail(context: RetrievalContext) -> str:
    """The rest of the identifier the cursor is inside, so ``fo|o`` looks up ``foo``."""
    text, offset = context.query.text, context.cursor_offset
    end = offset
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    return text[offset:end]


def _family(language: str | None) -> str | None:
    return _LANGUAGE_FAMILY.get(language, language) if language else None


def _definition_score(row: DefinitionRow, import_stems: list[str], folder: str, family: str | None) -> float:
    score = _KIND_WEIGHT.get(row.kind, 0.6)
    if family is not None and _family(row.language) != family:
        score *= 0.1
    if any(path_matches_stem(row.path, stem) for stem in import_stems):
        score *= 4.0
    elif posixpath.dirname(row.path) == folder:
        score *= 1.5
    if row.scope:
        score *= 0.8  # a method of some class is a weaker guess than a top-level function of that name
    return score
