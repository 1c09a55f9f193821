"""What a soak session checks from outside the processes: resident memory (``/proc``), the daemon the
language server started (its child), and the server's index against a fresh one of the same files."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

from indexer.workspace import WorkspaceIndex

# A symbol row as the index stores it, keyed by its file's path (file ids differ between databases).
_SYMBOLS = """
SELECT files.path, files.content_hash, symbols.name, symbols.kind, symbols.scope, symbols.start_byte,
       symbols.end_byte, symbols.line, symbols.column, symbols.node_start_line, symbols.node_end_line
FROM symbols JOIN files ON files.id = symbols.file_id
"""
_FILES = "SELECT path, content_hash, language FROM files"
_CHUNKS = """
SELECT files.path, chunks.start_line, chunks.end_line, chunks.kind, chunks.name, chunks.text
FROM chunks JOIN files ON files.id = chunks.file_id
"""


def resident_kib(pid: int) -> int:
    """``VmRSS`` of ``pid`` in KiB (0 when the process is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return 0
    return 0


def daemon_pid(server_pid: int) -> int | None:
    """The live ``codedraft daemon`` that the server ``server_pid`` started, if any."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        # the fields after the command's name (in parentheses): state, then the parent's pid
        state, parent = stat.rsplit(")", 1)[1].split()[:2]
        if int(parent) == server_pid and b"daemon" in command and state != "Z":
            return int(entry.name)
    return None


def index_rows(db_path: Path) -> dict[str, set[tuple[object, ...]]]:
    """The files, symbols and chunks of the index at ``db_path``, as sets of rows."""
    connection = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        return {
            name: set(connection.execute(sql))
            for name, sql in (("files", _FILES), ("symbols", _SYMBOLS), ("chunks", _CHUNKS))
        }
    finally:
        connection.close()


def fresh_index_rows(workspace: Path) -> dict[str, set[tuple[object, ...]]]:
    """The rows of a fresh index of ``workspace``'s files, built in a scratch database."""
    with tempfile.TemporaryDirectory(prefix="soak-index-") as scratch:
        db_path = Path(scratch) / "fresh.sqlite"
        with WorkspaceIndex(workspace, db_path) as index:
            index.refresh()
        return index_rows(db_path)


def server_index_path(cache_home: Path) -> Path:
    """The index database of a server running with ``XDG_CACHE_HOME=cache_home`` (one workspace)."""
    (db_path,) = (cache_home / "codedraft" / "index").glob("*.sqlite")
    return db_path


def index_difference(
    server: dict[str, set[tuple[object, ...]]], fresh: dict[str, set[tuple[object, ...]]]
) -> str:
    """What the server's index has that a fresh one lacks, and the reverse ("" when equal)."""
    lines = []
    for table in server:
        extra, missing = server[table] - fresh[table], fresh[table] - server[table]
        if extra or missing:
            lines.append(
                f"{table}: {len(extra)} rows only in the server's index, {len(missing)} only in a fresh one"
            )
            lines += [f"  server only: {row!r:.200}" for row in sorted(extra, key=repr)[:5]]
            lines += [f"  fresh only:  {row!r:.200}" for row in sorted(missing, key=repr)[:5]]
    return "\n".join(lines)
