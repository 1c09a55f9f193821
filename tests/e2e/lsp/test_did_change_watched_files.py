"""``workspace/didChangeWatchedFiles``: files the editor reports created or deleted reach the index at
once, even while the index's own watcher waits for the disk to settle; reports the index has no use
for (other schemes, outside the workspace, a broken URI, malformed params) cost nothing."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from lsprotocol import types

from indexer.schema import default_db_path
from tests.e2e.lsp_harness import RecordingClient, running_lsp
from tests.e2e.lsp_raw import raw_lsp
from tests.fixtures.waiting import wait_until

INDEX_TOKEN = "codedraft/index/1"


@contextmanager
def churning(path: Path) -> Iterator[None]:
    """Rewrites ``path`` every 20 ms: the index's own watcher waits for 0.3 s of quiet, so it
    re-indexes nothing meanwhile, and whatever the index takes in comes from the editor's reports."""
    stop = threading.Event()

    def churn() -> None:
        count = 0
        while not stop.wait(0.02):
            count += 1
            path.write_text(f"{count}\n")

    thread = threading.Thread(target=churn, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def indexed(db: Path) -> dict[str, list[str]]:
    """The files the index holds, with the names each defines."""
    with closing(sqlite3.connect(db)) as connection:
        rows = connection.execute(
            "SELECT f.path, s.name FROM files f LEFT JOIN symbols s ON s.file_id = f.id ORDER BY 1, 2"
        ).fetchall()
    held: dict[str, list[str]] = {}
    for path, name in rows:
        held.setdefault(path, []).extend([name] if name is not None else [])
    return held


def watched(*changes: tuple[str, types.FileChangeType]) -> types.DidChangeWatchedFilesParams:
    return types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=uri, type=kind) for uri, kind in changes]
    )


async def test_reported_files_reach_the_index_before_its_own_watcher(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "old.py").write_text("def old_one():\n    pass\n")
    db = default_db_path(workspace, {"XDG_CACHE_HOME": str(tmp_path / "cache")})
    async with running_lsp(workspace, tmp_path, daemon_address=f"unix:{tmp_path}/none.sock") as client:
        await _indexed_at_start(client)
        assert indexed(db) == {"old.py": ["old_one"]}
        created, deleted = types.FileChangeType.Created, types.FileChangeType.Deleted
        with churning(workspace / "churn.txt"):
            # Reports of nothing the server indexes come first.
            (tmp_path / "outside.py").write_text("def outside():\n    pass\n")
            client.workspace_did_change_watched_files(
                watched(
                    ("untitled:Untitled-1", created),
                    ("file://[broken/a.py", created),
                    ((tmp_path / "outside.py").as_uri(), created),
                    ((workspace / "notes.bin").as_uri(), created),
                )
            )
            (workspace / "notes.bin").write_bytes(b"\x00\x01")
            (workspace / "new.py").write_text("def new_one():\n    pass\n")
            client.workspace_did_change_watched_files(watched(((workspace / "new.py").as_uri(), created)))
            await wait_until(lambda: "new.py" in indexed(db), 10, "the created file in the index")
            assert indexed(db) == {"new.py": ["new_one"], "old.py": ["old_one"]}

            (workspace / "old.py").unlink()
            client.workspace_did_change_watched_files(watched(((workspace / "old.py").as_uri(), deleted)))
            await wait_until(lambda: "old.py" not in indexed(db), 10, "the deleted file gone from the index")
            assert indexed(db) == {"new.py": ["new_one"]}


async def _indexed_at_start(client: RecordingClient) -> None:
    """Waits for the first refresh's end; the server holds its index from then on."""

    def ended() -> bool:
        reports = client.progress_reports.get(INDEX_TOKEN, [])
        return bool(reports) and isinstance(reports[-1], types.WorkDoneProgressEnd)

    await wait_until(ended, 60, "the first indexing")


async def test_malformed_reports_are_refused_and_the_server_goes_on(tmp_path: Path) -> None:
    log = tmp_path / "lsp.log"
    async with raw_lsp(tmp_path, {}) as client:
        await wait_until(lambda: "lsp_server.indexing: indexed" in log.read_text(), 60, "the first indexing")
        for params in (
            {"changes": [{"uri": 3, "type": 1}, {"uri": "file://[broken/a.py", "type": 2}]},
            {"changes": [{"uri": "file:///a.py", "type": 9}]},
            None,
        ):
            await client.notify(types.WORKSPACE_DID_CHANGE_WATCHED_FILES, params)
        await client.alive(2)
    refused = [
        line.split(": ", 2)[-1] for line in log.read_text().splitlines() if "refused a message" in line
    ]
    bad = "bad params for workspace/didChangeWatchedFiles: "
    assert refused == [
        bad + "9 is not a valid FileChangeType @ params.changes[0].type",
        bad + "invalid value for type, expected Sequence @ params.changes",
    ]
    assert "watched_files" not in log.read_text()  # no traceback through the feature
