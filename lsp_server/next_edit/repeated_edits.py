"""Edits by example: the rule of the user's latest edit (``edit_rules.py``) proposed wherever else it
applies, with no model call: the rest of the file nearest the edit first, then the files the index
links to the rule's name (they import it and refer to it, as for renames).

Two edits in a row that agree make one rule of both (confidence: a rule of one common token is shown
only then); a rule the user dismissed is not offered again. Bounded: documents longer than
``MAX_PARSE_CHARS`` are not parsed, at most ``MAX_OTHER_FILES`` other files are read, and
``rule_sites.py`` bounds the work per file. Before offering, the site nearest the edit is applied to
the tree (re-parsed incrementally, a few milliseconds on a 5,000-line file): a rule that would break
the parse there is dropped (the others have the same shape and take the same text).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from lsp_server.completion.document_trees import DocumentTrees
from lsp_server.completion.syntax import MAX_PARSE_CHARS, encode, error_count, parse, replaced
from lsp_server.next_edit.edit_lines import learn_by_line
from lsp_server.next_edit.edit_pattern import Branch, Leaf
from lsp_server.next_edit.edit_rule import EditRule
from lsp_server.next_edit.edit_rules import learn
from lsp_server.next_edit.index_references import references_elsewhere
from lsp_server.next_edit.rule_agreement import agree
from lsp_server.next_edit.rule_sites import Site, find_sites

if TYPE_CHECKING:
    import tree_sitter

    from indexer.languages import LanguageSpec
    from indexer.store import IndexStore
    from lsp_server.next_edit.diffs import FileEdit

MAX_OTHER_FILES = 10
"""Other files searched for the rule's sites, at most (each costs a parse)."""
CHECKED_SITES = 1
"""Sites applied to the tree before the rule is offered; one that breaks the parse drops the rule."""

PathEdit = tuple[str, int, int, str, str]  # (path, start, end, old, new), characters of the path's text


class RepeatedEdits:
    """The rules learned from the user's edits in one workspace. Called from one thread at a time."""

    def __init__(self, trees: DocumentTrees | None = None) -> None:
        self._trees = DocumentTrees() if trees is None else trees
        self._previous: EditRule | None = None  # the rule of the user's edit before the latest
        self._latest: EditRule | None = None
        self._latest_before: str | None = None  # the latest edit's text before it (one per burst)
        self._offered: EditRule | None = None
        self._dismissed: set[tuple[object, ...]] = set()

    def propose(
        self,
        spec: LanguageSpec,
        edit: FileEdit,
        store: IndexStore | None = None,
        open_texts: Mapping[str, str] | None = None,
    ) -> list[PathEdit]:
        """The edits that repeat ``edit`` elsewhere (in ``edit.after``'s file first), nearest first;
        [] when it makes no rule, the rule is too wide or was dismissed, or it applies nowhere."""
        self._offered = None
        if max(len(edit.before), len(edit.after)) > MAX_PARSE_CHARS:
            return []
        before, after = encode(edit.before), encode(edit.after)
        old_tree = self._trees.tree(edit.path, spec, before)
        new_tree = self._trees.tree(edit.path, spec, after)
        learned = learn_by_line(spec, old_tree, before, after) or learn(old_tree, new_tree, before, after)
        if edit.before != self._latest_before:  # a new edit, not the latest one typed further
            self._previous, self._latest_before = self._latest, edit.before
        self._latest = None if learned is None else learned.rule
        if learned is None:
            return []
        rule = learned.rule
        both = agree(self._previous, rule) if self._previous is not None else None
        rule = both or rule
        if rule.key in self._dismissed:
            return []
        sites = find_sites(rule, new_tree, after, learned.start, (learned.start, learned.end))
        if not sites or _breaks_parse(spec, new_tree, after, sites[:CHECKED_SITES]):
            return []
        edits = _path_edits(edit.path, edit.after, after, sites)
        name = _name_of(rule)
        if store is not None and name is not None:
            edits += _elsewhere(spec, rule, edit.path, name, store, open_texts)
        self._offered = rule
        return edits

    def parse_ahead(self, path: str, spec: LanguageSpec, text: str) -> None:
        """Parses ``text`` as ``path``'s latest text now, so that learning from its next edit re-parses
        only what the edit changed."""
        if len(text) <= MAX_PARSE_CHARS:
            self._trees.tree(path, spec, encode(text))

    def dismissed(self) -> None:
        """The user dismissed the offered rule's edit: that rule is not offered again."""
        if self._offered is not None:
            self._dismissed.add(self._offered.key)

    def forget(self, path: str) -> None:
        """A closed document: its tree goes."""
        self._trees.forget(path)


def _breaks_parse(spec: LanguageSpec, tree: tree_sitter.Tree, source: bytes, sites: list[Site]) -> bool:
    errors = error_count(tree)
    return any(
        error_count(replaced(spec, tree, source, site.start, site.end, site.new)) > errors for site in sites
    )


def _path_edits(path: str, text: str, source: bytes, sites: list[Site]) -> list[PathEdit]:
    """The sites as character offsets of ``text`` (whose UTF-8 bytes are ``source``)."""
    ascii_only = len(text) == len(source)

    def offset(byte: int) -> int:
        return byte if ascii_only else len(source[:byte].decode("utf-8", "surrogatepass"))

    edits = []
    for site in sites:
        start, end = offset(site.start), offset(site.end)
        edits.append((path, start, end, text[start:end], site.new.decode("utf-8", "surrogatepass")))
    return edits


def _name_of(rule: EditRule) -> str | None:
    """The name the index can follow to other files: the function a rule's sites call or lie in."""
    name = rule.calls or rule.callee
    if name is None and isinstance(rule.before, Branch):
        first = rule.before.children[0]
        if isinstance(first, Leaf) and first.type == "identifier":
            name = first.text
    return name.decode("utf-8", "replace") if name else None


def _elsewhere(
    spec: LanguageSpec,
    rule: EditRule,
    path: str,
    name: str,
    store: IndexStore,
    open_texts: Mapping[str, str] | None,
) -> list[PathEdit]:
    """The rule's sites in the files that refer to ``name`` (from the index), in path order."""
    paths = sorted({found.path for found in references_elsewhere(store, path, name, open_texts=open_texts)})
    edits: list[PathEdit] = []
    for other in paths[:MAX_OTHER_FILES]:
        text = _text_of(store, other, open_texts)
        if text is None or len(text) > MAX_PARSE_CHARS:
            continue
        source = encode(text)
        edits += _path_edits(other, text, source, find_sites(rule, parse(spec, source), source))
    return edits


def _text_of(store: IndexStore, path: str, open_texts: Mapping[str, str] | None) -> str | None:
    if open_texts is not None and path in open_texts:
        return open_texts[path]
    try:
        return (store.workspace / path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
