"""Parsing a document with its tree-sitter grammar, for the filters that look at syntax."""

from __future__ import annotations

from typing import TYPE_CHECKING

from indexer.languages import LANGUAGES, LanguageSpec

if TYPE_CHECKING:
    import tree_sitter

# LSP language ids that differ from the indexer's language names.
_LSP_IDS = {
    "javascriptreact": "javascript",
    "typescriptreact": "tsx",
    "shellscript": "bash",
    "sh": "bash",
    "c#": "csharp",
    "cs": "csharp",
    "c++": "cpp",
}


def language_spec(language: str | None) -> LanguageSpec | None:
    """The indexer's language for an LSP language id (or an indexer language name), if it has a grammar."""
    if not language:
        return None
    name = language.lower()
    return LANGUAGES.get(_LSP_IDS.get(name, name))


def parse(spec: LanguageSpec, text: str) -> tree_sitter.Tree:
    """A syntax tree of ``text``."""
    import tree_sitter

    return tree_sitter.Parser(spec.language()).parse(text.encode("utf-8", "surrogatepass"))


def error_count(tree: tree_sitter.Tree) -> int:
    """ERROR and MISSING nodes in the tree: 0 for a file that parses cleanly."""
    count = 0
    cursor = tree.walk()
    visited_children = False
    while True:
        node = cursor.node
        if not visited_children and node is not None:
            if node.is_error or node.is_missing:
                count += 1
            if node.has_error and cursor.goto_first_child():
                continue
        if cursor.goto_next_sibling():
            visited_children = False
        elif cursor.goto_parent():
            visited_children = True
        else:
            return count
