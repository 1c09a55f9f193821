"""What keeps a query cheap on a large index: the BM25 scoring budget and the per-name definitions
cache, which must never answer with rows from before a write."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from indexer.retrieval.bm25 import within_scoring_budget
from indexer.workspace import WorkspaceIndex


def test_scoring_budget_drops_the_most_common_terms_first() -> None:
    counts = {"tensor": 2500, "value": 1800, "parse": 400}
    terms = ["value", "parseHeader", "tensor", "parse"]
    # parseHeader is under the floor (50): 50 + 400 + 1800 = 2250 fit, tensor would make 4750.
    assert within_scoring_budget(terms, counts, 3000) == ["value", "parseHeader", "parse"]
    assert within_scoring_budget(terms, counts, 100_000) == terms
    assert within_scoring_budget(["tensor", "value"], counts, 10) == ["value"]  # the rarest stays
    assert within_scoring_budget([], counts, 3000) == []


def test_cached_definitions_follow_writes(tmp_path: Path, write_files: Callable) -> None:
    root = tmp_path / "ws"
    write_files(root, {"a.py": "def shared():\n    return 1\n"})
    with WorkspaceIndex(root, db_path=tmp_path / "i.sqlite", workers=1) as index:
        index.refresh()
        assert [row.path for row in index.store.definitions_named(["shared", "other"])] == ["a.py"]
        write_files(root, {"b.py": "def shared():\n    return 2\n\n\ndef other():\n    pass\n"})
        index.refresh()
        rows = index.store.definitions_named(["shared", "other"])
        assert [(row.name, row.path) for row in rows] == [
            ("shared", "a.py"),
            ("shared", "b.py"),
            ("other", "b.py"),
        ]
        index.update_buffer("a.py", "x = 1\n")
        assert [row.path for row in index.store.definitions_named(["shared"])] == ["b.py"]
