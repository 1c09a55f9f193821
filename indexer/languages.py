"""The language table: which grammar, tags query and chunk nodes each file extension gets.

The table is data (``languages.toml``); grammars and compiled queries are loaded lazily and cached,
so importing this module costs nothing and a workspace of one language never loads the others.
"""

from __future__ import annotations

import functools
import importlib
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tree_sitter

QUERIES_DIR = Path(__file__).parent / "queries"
TABLE_PATH = Path(__file__).parent / "languages.toml"

# Text files without a grammar that are still worth retrieving from: chunked by line windows.
PLAIN_TEXT_EXTENSIONS = frozenset(
    {
        ".md",
        ".rst",
        ".txt",
        ".toml",
        ".yaml",
        ".yml",
        ".json",
        ".cfg",
        ".ini",
        ".html",
        ".css",
        ".sql",
        ".proto",
        ".kt",
        ".swift",
        ".scala",
        ".lua",
        ".r",
        ".jl",
        ".zig",
        ".vue",
        ".svelte",
    }
)


@dataclass(frozen=True)
class LanguageSpec:
    """One row of ``languages.toml``."""

    name: str
    extensions: tuple[str, ...]
    grammar: str
    function: str
    queries: tuple[str, ...]
    chunk_types: frozenset[str]
    line_comment: str | None
    block_comment: tuple[str, str] | None
    package_queries_dir: str | None

    def language(self) -> tree_sitter.Language:
        """The compiled grammar (loaded once per process)."""
        return _load_language(self.grammar, self.function)

    def tags_query(self) -> tree_sitter.Query:
        """The tags query: the ``queries`` sources concatenated and compiled once per process."""
        return _compile_query(self.name)

    def query_text(self) -> str:
        """The source of the tags query, in the order the table lists its parts."""
        return "\n".join(self._query_part(part) for part in self.queries)

    def _query_part(self, part: str) -> str:
        if part == "package" or part.startswith("package:"):
            module_name = part.partition(":")[2] or self.grammar
            queries_dir = self.package_queries_dir if module_name == self.grammar else None
            return _package_tags_path(module_name, queries_dir).read_text(encoding="utf-8")
        return (QUERIES_DIR / part).read_text(encoding="utf-8")


def _package_tags_path(module_name: str, queries_dir: str | None) -> Path:
    module = importlib.import_module(module_name)
    package_dir = Path(module.__file__ or "").parent
    if queries_dir is not None:
        return package_dir.parent / queries_dir / "tags.scm"
    return package_dir / "queries" / "tags.scm"


@functools.cache
def _load_language(grammar: str, function: str) -> tree_sitter.Language:
    import tree_sitter

    module = importlib.import_module(grammar)
    return tree_sitter.Language(getattr(module, function)())


@functools.cache
def _compile_query(name: str) -> tree_sitter.Query:
    import tree_sitter

    spec = LANGUAGES[name]
    return tree_sitter.Query(spec.language(), spec.query_text())


def _read_table(path: Path) -> dict[str, LanguageSpec]:
    with path.open("rb") as handle:
        raw = tomllib.load(handle)
    table: dict[str, LanguageSpec] = {}
    for name, row in raw.items():
        block = row.get("block_comment")
        table[name] = LanguageSpec(
            name=name,
            extensions=tuple(row["extensions"]),
            grammar=row["grammar"],
            function=row.get("function", "language"),
            queries=tuple(row["queries"]),
            chunk_types=frozenset(row["chunk_types"]),
            line_comment=row.get("line_comment"),
            block_comment=(block[0], block[1]) if block else None,
            package_queries_dir=row.get("package_queries_dir"),
        )
    return table


LANGUAGES: dict[str, LanguageSpec] = _read_table(TABLE_PATH)
_BY_EXTENSION: dict[str, LanguageSpec] = {
    extension: spec for spec in LANGUAGES.values() for extension in spec.extensions
}


def language_for_path(path: str | Path) -> LanguageSpec | None:
    """The language of a file by its extension, or None for files without a grammar."""
    return _BY_EXTENSION.get(Path(path).suffix.lower())


def language_name_for_path(path: str | Path) -> str | None:
    """The language name stored for a file: a grammar's name, "text" for plain text, None to skip."""
    spec = language_for_path(path)
    if spec is not None:
        return spec.name
    if Path(path).suffix.lower() in PLAIN_TEXT_EXTENSIONS:
        return "text"
    return None
