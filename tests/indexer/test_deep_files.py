"""No file fails for its shape: deeply nested syntax and deeply nested folders are walked without
recursion, in the parsing process and in the workspace walk alike."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from indexer import parse_pool, refresh
from indexer.analysis import analyze
from indexer.skipping import SkipPolicy, walk_workspace
from indexer.workspace import WorkspaceIndex

DEPTH = 20_000

# Generated sources nested DEPTH levels deep, one level a line, as parser tables and generated data
# files are (on one line they would be skipped as minified before any parsing).
DEEP_SOURCES = {
    "parens.py": "x = " + "(\n" * DEPTH + "1" + "\n)" * DEPTH + "\n",
    "lists.py": "table = " + "[\n" * DEPTH + "\n]" * DEPTH + "\n",
    "sums.py": "total = " + "1 +\n" * DEPTH + "1\n",
    "table.c": "static const int table[] = " + "{\n" * DEPTH + "1" + "\n}" * DEPTH + ";\n",
    "calls.js": "const v = " + "f(\n" * DEPTH + "0" + "\n)" * DEPTH + ";\n",
}
DEFINED = {"parens.py": ["x"], "lists.py": ["table"], "sums.py": ["total"], "table.c": [], "calls.js": []}


@contextlib.contextmanager
def recursion_limit(limit: int) -> Iterator[None]:
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def _stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1  # type: ignore[assignment]
    return depth


@pytest.mark.parametrize("name", sorted(DEEP_SOURCES))
def test_deeply_nested_file_is_analysed_without_recursion(name: str) -> None:
    source = DEEP_SOURCES[name]
    # A walk that recursed once per level would need DEPTH frames; allow a fixed few dozen.
    with recursion_limit(_stack_depth() + 60):
        analysis = analyze(name, source.encode())
    assert [tag.name for tag in analysis.tags if tag.is_definition] == DEFINED[name]
    assert analysis.chunks, "the file's text is still retrievable"
    assert analysis.chunks[0].start_line == 0


def test_deeply_nested_folders_are_walked_without_recursion(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    directory = root
    for _ in range(300):
        directory = directory / "d"
        directory.mkdir(parents=True)
    (directory / "leaf.py").write_text("def leaf():\n    return 1\n", encoding="utf-8")
    (root / "top.py").write_text("x = 1\n", encoding="utf-8")
    with recursion_limit(_stack_depth() + 60):
        walk = walk_workspace(root, SkipPolicy())
    assert [file.relative_path for file in walk.files] == ["d/" * 300 + "leaf.py", "top.py"]
    assert walk.skipped == []


@pytest.mark.parametrize("workers", [1, 2], ids=["in-process", "workers"])
def test_refresh_indexes_deep_files_and_reports_no_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, workers: int
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for name, source in DEEP_SOURCES.items():
        (root / name).write_text(source, encoding="utf-8")
    (root / "plain.py").write_text("def plain():\n    return table\n", encoding="utf-8")
    monkeypatch.setattr(refresh, "MIN_FILES_FOR_WORKERS", 1)
    monkeypatch.setattr(parse_pool, "MIN_FILES_FOR_WORKERS", 1)
    with (
        caplog.at_level(logging.ERROR, logger="indexer.refresh"),
        WorkspaceIndex(root, db_path=tmp_path / "i.sqlite", workers=workers) as index,
    ):
        report = index.refresh()
        indexed = {path for (path,) in index.store.query("SELECT path FROM files")}
    assert report.skipped == []
    assert indexed == {*DEEP_SOURCES, "plain.py"}
    assert caplog.text == ""


def test_a_file_that_fails_is_skipped_with_its_reason_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real_analyze = parse_pool.analyze

    def refuses_deep(path: str, data: bytes) -> object:
        if path == "parens.py":
            raise RecursionError("maximum recursion depth exceeded")
        return real_analyze(path, data)

    monkeypatch.setattr(parse_pool, "analyze", refuses_deep)
    root = tmp_path / "ws"
    root.mkdir()
    (root / "parens.py").write_text(DEEP_SOURCES["parens.py"], encoding="utf-8")
    (root / "plain.py").write_text("def plain():\n    return 1\n", encoding="utf-8")
    with (
        caplog.at_level(logging.ERROR, logger="indexer.refresh"),
        WorkspaceIndex(root, db_path=tmp_path / "i.sqlite", workers=1) as index,
    ):
        report = index.refresh()
    assert report.added == 1
    assert report.skipped == [("parens.py", "indexing failed (RecursionError)")]
    assert "indexing parens.py failed: RecursionError('maximum recursion depth exceeded')" in caplog.text
    assert os.path.exists(root / "parens.py")
