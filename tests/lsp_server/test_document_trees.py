"""Incremental re-parsing gives the trees a full parse gives, node for node."""

from __future__ import annotations

import pytest
import tree_sitter

from lsp_server.completion.document_trees import DocumentTrees
from lsp_server.completion.postprocess.context import CursorContext
from lsp_server.completion.syntax import MAX_PARSE_CHARS, encode, language_spec, parse, point_at

PYTHON = language_spec("python")
DOCUMENT = 'import os\n\n\ndef home():\n    """Where ~ is: é ✓."""\n    return os.path.expanduser("~")\n'


def nodes(tree: tree_sitter.Tree) -> list[tuple[str, int, int, tuple[int, ...]]]:
    """Every node's type, byte range and start point, in document order."""
    found = []
    cursor = tree.walk()
    while True:
        node = cursor.node
        assert node is not None
        found.append((node.type, node.start_byte, node.end_byte, tuple(node.start_point)))
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return found


@pytest.mark.parametrize(
    "edited",
    [
        DOCUMENT.replace("    return", "    x = 1\n    return"),  # lines added
        DOCUMENT.replace("é ✓", "é"),  # multi-byte characters removed
        DOCUMENT.replace("home", "höme_dir"),  # replaced, longer
        "# top\n" + DOCUMENT,  # at the start
        DOCUMENT + "home(",  # at the end, leaving an error
        DOCUMENT.replace('"~"', '"~'),  # an unterminated string
        "",
    ],
)
def test_a_changed_document_is_reparsed_as_a_full_parse_would(edited: str) -> None:
    assert PYTHON is not None
    trees = DocumentTrees()
    trees.tree("file:///a.py", PYTHON, encode(DOCUMENT))
    incremental = trees.tree("file:///a.py", PYTHON, encode(edited))
    assert nodes(incremental) == nodes(parse(PYTHON, edited))


def test_the_tree_is_kept_per_document_and_forgotten() -> None:
    assert PYTHON is not None
    trees = DocumentTrees()
    first = trees.tree("file:///a.py", PYTHON, encode(DOCUMENT))
    assert trees.tree("file:///a.py", PYTHON, encode(DOCUMENT)) is first
    assert trees.tree("file:///b.py", PYTHON, encode(DOCUMENT)) is not first
    trees.forget("file:///a.py")
    assert trees.tree("file:///a.py", PYTHON, encode(DOCUMENT)) is not first


def test_cursor_context_carries_the_tree_when_there_is_a_grammar() -> None:
    trees = DocumentTrees()
    offset = DOCUMENT.index("return")
    context = trees.cursor_context("file:///a.py", DOCUMENT, offset, "python")
    assert context.prefix + context.suffix == DOCUMENT and context.suffix.startswith("return")
    assert context.tree is not None and context.syntax is not None
    assert context.syntax.cursor == len(encode(DOCUMENT[:offset]))
    assert trees.cursor_context("file:///a.txt", DOCUMENT, offset, "plaintext").tree is None
    huge = "x = 1\n" * (MAX_PARSE_CHARS // 6 + 1)
    context = trees.cursor_context("file:///b.py", huge, 0, "python")
    assert context.tree is None and context.syntax is None


@pytest.mark.parametrize("text", ["x = 1\n    ", "if x:\n        y(", "'''", "é = 2"])
def test_a_suggestions_tree_is_the_full_parse_of_the_document_with_it(text: str) -> None:
    assert PYTHON is not None
    offset = DOCUMENT.index("return")
    context = CursorContext(DOCUMENT[:offset], DOCUMENT[offset:], "python")
    assert context.syntax is not None
    inserted = context.syntax.with_insertion(text)
    assert nodes(inserted) == nodes(parse(PYTHON, DOCUMENT[:offset] + text + DOCUMENT[offset:]))
    assert context.syntax.with_insertion(text) is inserted  # filters that check the same text share it


def test_points_count_rows_and_byte_columns() -> None:
    source = encode("ab\né✓x")
    assert point_at(source, 0) == (0, 0)
    assert point_at(source, 2) == (0, 2)
    assert point_at(source, 3) == (1, 0)
    assert point_at(source, len(source)) == (1, 6)  # é is 2 bytes, ✓ 3
