"""A parse worker that dies (segfault, SIGKILL) costs only its own files: they are tried again one by
one in a fresh worker, a file that kills a worker twice is skipped with the reason logged, and the run
finishes with every other file indexed exactly as without the deaths."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from indexer import refresh
from indexer.file_rows import FileRows
from indexer.parse_pool import rows_or_error
from indexer.parse_workers import WorkerDied, run_in_workers
from indexer.workspace import WorkspaceIndex
from tests.indexer.dying_parse import MARKER_DIR_ENV, dying_rows


def _plain(number: int) -> str:
    return f"def step_{number}(value):\n    return helper(value) + {number}\n"


def _jobs(names: list[str]) -> list[tuple[int, str, bytes]]:
    return [(n, name, _plain(n).encode()) for n, name in enumerate(names)]


@pytest.mark.parametrize("killer", ["segv.py", "kill.py"])
def test_a_file_that_kills_its_worker_twice_is_answered_with_the_reason(
    killer: str, caplog: pytest.LogCaptureFixture
) -> None:
    names = [f"m{n}.py" for n in range(40)]
    names[21] = killer  # in the second batch of 16: the other 15 files of that batch are retried
    with caplog.at_level(logging.WARNING, logger="indexer.parse_workers"):
        results = list(run_in_workers(_jobs(names), 2, dying_rows))
    assert [key for key, _ in results] == list(range(40))
    failed = {names[key]: str(result) for key, result in results if isinstance(result, WorkerDied)}
    signal_name = "SIGSEGV" if killer.startswith("segv") else "SIGKILL"
    assert failed == {killer: f"parse worker died ({signal_name})"}
    expected = [(key, rows_or_error(path, data)) for key, path, data in _jobs(names) if key != 21]
    assert [(key, result) for key, result in results if key != 21] == expected
    assert f"parse worker died ({signal_name}) twice while parsing {killer}: skipped" in caplog.text


def test_a_file_that_kills_its_worker_once_is_indexed_on_the_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MARKER_DIR_ENV, str(tmp_path))
    names = [f"m{n}.py" for n in range(20)]
    names[3] = "once.py"
    results = list(run_in_workers(_jobs(names), 2, dying_rows))
    assert [key for key, _ in results] == list(range(20))
    assert all(isinstance(result, FileRows) for _, result in results)
    assert (tmp_path / "once.py").exists()


def _dying_rows_in_order(
    jobs: Iterable[tuple[object, str, bytes]], workers: int
) -> Iterator[tuple[object, FileRows | Exception]]:
    return run_in_workers(jobs, workers, dying_rows)


def test_a_refresh_whose_worker_segfaults_finishes_and_skips_that_file(
    tmp_path: Path, write_files: Callable, dump_store: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {f"pkg{n % 4}/mod_{n}.py": _plain(n) for n in range(60)}
    root = tmp_path / "ws"
    write_files(root, {**files, "pkg1/segv_here.py": _plain(999)})
    monkeypatch.setattr(refresh, "MIN_FILES_FOR_WORKERS", 1)
    monkeypatch.setattr(refresh, "rows_in_order", _dying_rows_in_order)
    with WorkspaceIndex(root, db_path=tmp_path / "dying.sqlite", workers=2) as index:
        report = index.refresh()
    assert report.added == 60
    assert report.skipped == [("pkg1/segv_here.py", "parse worker died (SIGSEGV)")]
    monkeypatch.undo()
    clean_root = tmp_path / "clean"
    write_files(clean_root, files)
    with WorkspaceIndex(clean_root, db_path=tmp_path / "clean.sqlite", workers=1) as index:
        index.refresh()
    dying, clean = dump_store(tmp_path / "dying.sqlite"), dump_store(tmp_path / "clean.sqlite")
    for table in ("symbols", "chunks", "counts", "integrity"):
        assert dying[table] == clean[table]


def test_workers_that_cannot_run_at_all_fail_the_run_instead_of_every_file() -> None:
    names = [f"kill{n}.py" for n in range(40)]
    with pytest.raises(
        RuntimeError, match=r"^parse workers die before answering: parse worker died \(SIGKILL\)$"
    ):
        list(run_in_workers(_jobs(names), 2, dying_rows))
