"""Renames propagated with no model: the same symbol's other occurrences in the file (in scope, never
in strings or comments, never the edited one), then in files that import it through the index; and
a function's call sites after its parameters change."""

from __future__ import annotations

from pathlib import Path

from indexer.languages import LANGUAGES
from indexer.workspace import WorkspaceIndex
from lsp_server.next_edit.renames import (
    JumpTarget,
    ProposedEdit,
    call_sites_after_signature_change,
    propose_renames,
)

PY = LANGUAGES["python"]
GEO = '''LIMIT = 10


def area(width, height):
    """Area of width x height."""
    # width is checked
    if width > LIMIT:
        return "width too large"
    scale = lambda width: width * 2
    return width * height


def other(width):
    return width + area(width, 1)


print(area(2, 3), LIMIT)
'''


def test_a_renamed_parameter_is_renamed_in_its_function_only() -> None:
    after = GEO.replace("def area(width,", "def area(w,")
    assert propose_renames(PY, "geo.py", GEO, after) == [
        ProposedEdit("geo.py", (6, 7), (6, 12), "w"),  # not the docstring, the comment, the string,
        ProposedEdit("geo.py", (9, 11), (9, 16), "w"),  # the lambda's own width, nor other()'s
    ]


def test_a_rename_at_one_use_proposes_the_definition_and_the_other_uses() -> None:
    after = GEO.replace("if width > LIMIT", "if width > MAX")
    assert propose_renames(PY, "geo.py", GEO, after) == [
        ProposedEdit("geo.py", (16, 18), (16, 23), "MAX"),  # after the edit first, then from the top
        ProposedEdit("geo.py", (0, 0), (0, 5), "MAX"),
    ]
    renamed_use = GEO.replace("    return width * height", "    return wide * height")
    assert propose_renames(PY, "geo.py", GEO, renamed_use) == [
        ProposedEdit("geo.py", (3, 9), (3, 14), "wide"),
        ProposedEdit("geo.py", (6, 7), (6, 12), "wide"),
    ]


def test_positions_after_the_edit_on_its_line_move_with_it() -> None:
    before = "def f(x):\n    return x + x\n"
    after = "def f(x):\n    return value + x\n"
    assert propose_renames(PY, "f.py", before, after) == [
        ProposedEdit("f.py", (1, 19), (1, 20), "value"),
        ProposedEdit("f.py", (0, 6), (0, 7), "value"),
    ]


def test_edits_that_rename_nothing_propose_nothing() -> None:
    assert propose_renames(PY, "geo.py", GEO, GEO) == []
    assert propose_renames(PY, "geo.py", GEO, GEO.replace("LIMIT = 10", "LIMIT = 12")) == []
    assert propose_renames(PY, "geo.py", GEO, GEO.replace("width too large", "too wide")) == []
    assert propose_renames(PY, "geo.py", GEO, GEO.replace("(2, 3)", "(2, 3, 4)")) == []


def test_a_renamed_method_is_renamed_at_its_member_uses() -> None:
    before = "class A:\n    def run(self):\n        return self.run\n\n\nrun = 1\nA().run()\n"
    after = before.replace("def run", "def start")
    assert propose_renames(PY, "a.py", before, after) == [
        ProposedEdit("a.py", (2, 20), (2, 23), "start"),
        ProposedEdit("a.py", (6, 4), (6, 7), "start"),
    ]


def test_a_module_level_rename_reaches_the_files_that_import_it(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "geo.py").write_text(GEO)
    (root / "app.py").write_text("from geo import area\n\nprint(area(1, 2))  # area\n")
    (root / "own.py").write_text("import geo\n\n\ndef area():\n    return 0\n\n\narea()\n")
    (root / "unrelated.py").write_text("print(area(5, 5))\n")
    (root / "stale.py").write_text("from geo import area\narea(1, 1)\n")
    with WorkspaceIndex(root, db_path=tmp_path / "index.sqlite") as index:
        index.refresh()
        after = GEO.replace("def area(", "def surface(")
        open_texts = {"stale.py": "from geo import area\n\n\nx = 1; area(1, 1)\n"}
        assert propose_renames(PY, "geo.py", GEO, after, index.store, open_texts) == [
            ProposedEdit("geo.py", (13, 19), (13, 23), "surface"),
            ProposedEdit("geo.py", (16, 6), (16, 10), "surface"),
            ProposedEdit("app.py", (0, 16), (0, 20), "surface"),
            ProposedEdit("app.py", (2, 6), (2, 10), "surface"),
            # stale.py's indexed call is no longer where the index says (the open text moved it).
            ProposedEdit("stale.py", (0, 16), (0, 20), "surface"),
        ]
        changed = GEO.replace("def area(width, height)", "def area(width, height, depth)")
        assert call_sites_after_signature_change(PY, "geo.py", GEO, changed, index.store) == [
            JumpTarget("geo.py", (13, 19)),
            JumpTarget("geo.py", (16, 6)),
            JumpTarget("app.py", (2, 6)),
            JumpTarget("stale.py", (1, 0)),
        ]


def test_only_a_parameter_list_change_points_at_call_sites() -> None:
    assert call_sites_after_signature_change(PY, "geo.py", GEO, GEO.replace("LIMIT = 10", "LIMIT = 1")) == []
    assert call_sites_after_signature_change(PY, "geo.py", GEO, GEO.replace("width * height", "height")) == []


def test_a_document_too_long_to_parse_proposes_nothing() -> None:
    long = "x = 1\n" * 70_000 + GEO  # over the 400,000 characters completions parse
    assert propose_renames(PY, "geo.py", long, long.replace("def area(width,", "def area(w,")) == []


def test_a_renamed_keyword_argument_renames_no_variable() -> None:
    """``post(data=data)`` -> ``post(content=data)`` names the callee's parameter: the local ``data``
    stays (seen in httpx's history by ``codedraft bench next-edit``)."""
    before = "def send(data):\n    post(data=data)\n    return data\n"
    after = before.replace("post(data=", "post(content=")
    assert propose_renames(PY, "send.py", before, after) == []
