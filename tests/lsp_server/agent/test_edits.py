"""Reading edits out of replies, applying them, and refusing paths outside the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_server.agent.edits import (
    EditDoesNotApply,
    MalformedEdit,
    Replacement,
    Target,
    apply_replacement,
    changes_problem,
    parse_edit,
)
from lsp_server.agent.lsp_fix import changed_lines
from lsp_server.agent.scratch import ScratchCopy
from lsp_server.rewrite.proposal_check import EditOutsideWorkspace
from tests.lsp_server.rewrite.test_proposal_check import BEFORE, FIB, GOOD

TEXT = "def f(x):\n    y = x + 1\n    return y\n"
TARGET = Target("m.py", 1, 1)


def test_search_replace_blocks_with_paths_and_fences() -> None:
    reply = (
        "Here is the fix.\n```python\nsrc/m.py\n<<<<<<< SEARCH\n    y = x + 1\n=======\n    y = x + 2\n"
        ">>>>>>> REPLACE\n```\nand\n<<<<<<< SEARCH\n    return y\n=======\n    return -y\n>>>>>>> REPLACE\n"
    )
    assert parse_edit(reply, TARGET, TEXT) == [
        Replacement("src/m.py", "    y = x + 1", "    y = x + 2"),
        Replacement("m.py", "    return y", "    return -y"),
    ]


def test_unified_diff_hunks_become_replacements() -> None:
    reply = (
        "--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n def f(x):\n-    y = x + 1\n+    y = x - 1\n     return y\n"
    )
    (replacement,) = parse_edit(reply, TARGET, TEXT)
    assert replacement.path == "m.py"
    assert apply_replacement(TEXT, replacement) == TEXT.replace("x + 1", "x - 1")


def test_a_bare_code_block_replaces_the_target_lines_keeping_indentation() -> None:
    (replacement,) = parse_edit("```python\ny = x * 2\n```", TARGET, TEXT)
    assert apply_replacement(TEXT, replacement) == "def f(x):\n    y = x * 2\n    return y\n"


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("", "no search/replace block, diff or code block"),
        ("m.py\n<<<<<<< SEARCH\nx\n=======\ny\n", "not closed"),
        ("--- a/m.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n", "deletes a file"),
        ("@@ -1 +1 @@\n-a\n+b\n--- a/m.py\n", "before any [+]{3}"),
    ],
)
def test_malformed_replies_say_why(reply: str, reason: str) -> None:
    with pytest.raises(MalformedEdit, match=reason):
        parse_edit(reply, TARGET, TEXT)


def test_applying_is_exact_once_or_a_clear_error() -> None:
    assert apply_replacement("a  \nb\n", Replacement("m", "a\nb", "c")) == "c\n"  # trailing spaces tolerated
    with pytest.raises(EditDoesNotApply, match="not in m"):
        apply_replacement(TEXT, Replacement("m", "nowhere", "x"))
    with pytest.raises(EditDoesNotApply, match="occurs 2 times"):
        apply_replacement("a\na\n", Replacement("m", "a", "b"))
    assert apply_replacement(None, Replacement("new.py", "", "x = 1")) == "x = 1\n"
    with pytest.raises(EditDoesNotApply, match="does not exist"):
        apply_replacement(None, Replacement("new.py", "x", "y"))


def test_paths_outside_the_workspace_are_refused(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "pkg").mkdir(parents=True)
    (workspace / "pkg" / "m.py").write_text(TEXT)
    (tmp_path / "outside.py").write_text("secret\n")
    os.symlink(tmp_path / "outside.py", workspace / "link.py")
    os.symlink(tmp_path, workspace / "up")
    scratch = ScratchCopy(workspace)
    try:
        for path, reason in [
            ("../outside.py", "climbs out"),
            ("pkg/../../outside.py", "climbs out"),
            (str(tmp_path / "outside.py"), "outside the workspace"),
            ("link.py", "symlink"),
            ("up/outside.py", "symlink"),
            (".git/config", "version-control"),
        ]:
            with pytest.raises(EditOutsideWorkspace, match=reason):
                scratch.write(path, "pwned\n")
        scratch.write(str(workspace / "pkg" / "m.py"), "changed\n")  # absolute, but inside
        assert scratch.changes() == {"pkg/m.py": (TEXT, "changed\n")}
        scratch.revert()
        assert scratch.changes() == {} and scratch.read("pkg/m.py") == TEXT
    finally:
        scratch.close()
    assert (tmp_path / "outside.py").read_text() == "secret\n"
    assert (workspace / "pkg" / "m.py").read_text() == TEXT


def test_the_copy_skips_tools_and_keeps_unsaved_buffers(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".venv").mkdir(parents=True)
    (workspace / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (workspace / ".git").mkdir()
    (workspace / "m.py").write_text("on disk\n")
    scratch = ScratchCopy(workspace, {"m.py": "unsaved\n"})
    try:
        assert scratch.tools == [workspace.resolve() / ".venv", Path("/usr")]
        assert sorted(p.name for p in scratch.root.iterdir()) == [".venv", "m.py"]
        assert list((scratch.root / ".venv").iterdir()) == []  # a mount point for the read-only bind
        assert scratch.read("m.py") == "unsaved\n"
    finally:
        scratch.close()


def test_changed_lines_are_the_smallest_whole_line_edit() -> None:
    span, text = changed_lines("a\nb\nc\n", "a\nB\nc\n")
    assert (span.start.line, span.start.character, span.end.line, span.end.character, text) == (
        1,
        0,
        2,
        0,
        "B\n",
    )
    span, text = changed_lines("a\nb", "a\nbe")
    assert (span.start.line, span.end.line, span.end.character, text) == (1, 1, 1, "be")


def test_changes_name_the_file_and_skip_new_files() -> None:
    target = Target("calc.py", 3, 6)
    changes = {"calc.py": (BEFORE, BEFORE.replace(FIB, "x = 1\n")), "new.py": (None, "print(1)\n")}
    assert changes_problem(changes, target, "") == "calc.py: the proposal drops the definition of fibonacci"
    good = {"calc.py": (BEFORE, BEFORE.replace(FIB, GOOD))}
    assert changes_problem(good, target, "") is None
