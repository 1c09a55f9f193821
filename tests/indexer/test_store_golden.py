"""A fresh index of a small tree holds exactly the records that the unoptimised indexer wrote.

``fixtures/golden_store.json`` was written by the indexer before parsing moved its row-building into
the workers and its writes into ``executemany`` batches; the fast path must reproduce it row for row
(files, definitions, chunks with their full-text terms), in one process and in worker processes.
After a deliberate change to what the index stores, regenerate with ``CODEDRAFT_UPDATE_SNAPSHOTS=1``
and review the diff.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from indexer import parse_pool, refresh
from indexer.workspace import WorkspaceIndex

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = FIXTURES / "golden_store.json"


def _big_python_module() -> str:
    """A module with a class too large for one chunk, long functions and non-ASCII names."""
    methods = "".join(
        f"    def method_{n}(self, value_{n}):\n"
        f"        # The {n}th step: café → 𝔘nicode columns count in UTF-16.\n"
        f"        total = self.helper_{n}(value_{n}) + len('é{n}')\n"
        + "".join(f"        total += step_{n}_{k}(total)\n" for k in range(6))
        + "        return total\n\n"
        for n in range(12)
    )
    long_function = "def long_function(items):\n" + "".join(
        f"    result_{k} = transformHTTPReply(items[{k}], parse_value)\n" for k in range(90)
    )
    header = '"""A generated module."""\n\nimport os\nfrom json import loads\n\n\n'
    return f"{header}class Big(Base):\n{methods}\n{long_function}"


def _build_tree(root: Path) -> None:
    shutil.copytree(FIXTURES / "languages", root, ignore=shutil.ignore_patterns("*.snapshot"))
    (root / "pkg").mkdir()
    (root / "pkg" / "big.py").write_text(_big_python_module(), encoding="utf-8")
    (root / "pkg" / "latin.py").write_bytes(b"def caf\xe9():\n    return 'd\xe9j\xe0'\n")
    (root / "pkg" / "deep.py").write_text("x = " + "(" * 300 + "1" + ")" * 300 + "\n", encoding="utf-8")


def _canonical(dump: dict[str, list[tuple]]) -> dict[str, list[list[object]]]:
    """The dump as JSON values; stat times (which depend on when the tree was written) left out."""

    def plain(value: object) -> object:
        return value.hex() if isinstance(value, bytes) else value

    rows = {name: [[plain(value) for value in row] for row in dump[name]] for name in dump}
    rows["files"] = [row[:4] + row[5:] for row in rows["files"]]  # without mtime_ns
    return rows


@pytest.mark.parametrize("workers", [1, 2], ids=["in-process", "workers"])
def test_fresh_index_matches_the_golden_records(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    dump_store: Callable[[Path], dict[str, list[tuple]]],
    workers: int,
) -> None:
    root = tmp_path / "tree"
    _build_tree(root)
    # The tree is small: let it take the worker-process path all the same.
    monkeypatch.setattr(refresh, "MIN_FILES_FOR_WORKERS", 1)
    monkeypatch.setattr(parse_pool, "MIN_FILES_FOR_WORKERS", 1)
    with WorkspaceIndex(root, db_path=tmp_path / "index.sqlite", workers=workers) as index:
        report = index.refresh()
    assert report.skipped == []
    rendered = _canonical(dump_store(tmp_path / "index.sqlite"))
    if os.environ.get("CODEDRAFT_UPDATE_SNAPSHOTS") and workers == 1:
        GOLDEN.write_text(json.dumps(rendered, indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert rendered == golden
