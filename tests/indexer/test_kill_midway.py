"""A real indexer process killed with SIGKILL mid-index leaves a consistent store that the next run
completes to exactly what a clean run produces."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

RUN_INDEX = (
    "import argparse, sys\n"
    "from codedraft import index\n"
    "parser = argparse.ArgumentParser()\n"
    "index.configure(parser)\n"
    "sys.exit(index.run(parser.parse_args(sys.argv[1:])))\n"
)
FILE_COUNT = 600


def module_text(number: int) -> str:
    functions = "".join(
        f"def step_{number}_{k}(value):\n    total = value + {k}\n    return helper_{k % 7}(total)\n\n\n"
        for k in range(30)
    )
    return f'"""Module {number}."""\n\nimport os\n\n\n{functions}'


def run_index(root: Path, db: Path, marker: str = "") -> subprocess.Popen[bytes]:
    repo = Path(__file__).resolve().parents[2]
    return subprocess.Popen(
        [sys.executable, "-c", RUN_INDEX, str(root), "--db", str(db), "--quiet"],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(repo), "CODEDRAFT_TEST_MARKER": marker},
    )


def wait_until_gone(marker: str, timeout: float = 10.0) -> bool:
    """Whether every process carrying ``marker`` in its environment (the indexer and the parse workers
    it spawned) has exited. Linux only; elsewhere trivially true."""
    if not Path("/proc").is_dir():
        return True
    needle = f"CODEDRAFT_TEST_MARKER={marker}".encode()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = False
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    alive = alive or needle in (entry / "environ").read_bytes().split(b"\0")
                except OSError:
                    continue
        if not alive:
            return True
        time.sleep(0.2)
    return False


def committed_files(db: Path) -> int:
    try:
        connection = sqlite3.connect(db, timeout=1)
        try:
            return connection.execute("SELECT count(*) FROM files").fetchone()[0]
        finally:
            connection.close()
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_sigkill_mid_index_then_rerun_matches_clean(
    tmp_path: Path, write_files: Callable, dump_store: Callable
) -> None:
    root = tmp_path / "ws"
    write_files(root, {f"pkg{n % 10}/mod_{n}.py": module_text(n) for n in range(FILE_COUNT)})
    killed_db = tmp_path / "killed.sqlite"

    marker = uuid.uuid4().hex
    process = run_index(root, killed_db, marker)
    deadline = time.monotonic() + 120
    while committed_files(killed_db) == 0 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
    assert process.poll() is None, "the indexer finished before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert wait_until_gone(marker), "parse workers outlived their killed parent"
    partial = committed_files(killed_db)
    assert 0 < partial < FILE_COUNT
    # What the killed run committed is already consistent.
    assert dump_store(killed_db)["integrity"] == [("ok",)]
    counts = dump_store(killed_db)["counts"][0]
    assert counts[0] == counts[1] and counts[2] == 0

    rerun = run_index(root, killed_db)
    out, err = rerun.communicate(timeout=240)
    assert rerun.returncode == 0, err.decode()
    assert f"indexed {FILE_COUNT - partial} files ({FILE_COUNT - partial} new" in out.decode()

    clean_db = tmp_path / "clean.sqlite"
    clean = run_index(root, clean_db)
    clean.communicate(timeout=240)
    assert clean.returncode == 0
    assert dump_store(killed_db) == dump_store(clean_db)
