"""``codedraft index``: index a workspace folder and say what was done."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from codedraft.errors import CommandError
from codedraft.values import positive_int
from indexer.skipping import DEFAULT_MAX_FILE_KIB, SkipPolicy, max_file_bytes

HELP = "index a workspace (tree-sitter tags and chunks in SQLite; only changed files are parsed again)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", type=Path, metavar="PATH", help="the workspace folder")
    parser.add_argument(
        "--db",
        type=Path,
        default=None,
        help="the index database (default: $CODEDRAFT_INDEX_DIR or ~/.cache/codedraft/index/, keyed by PATH)",
    )
    parser.add_argument(
        "--max-file-kb",
        type=positive_int,
        default=DEFAULT_MAX_FILE_KIB,
        help=f"skip files larger than this many KiB (1,024 bytes; default: {DEFAULT_MAX_FILE_KIB}, as the "
        "language server's index.maxFileKb)",
    )
    parser.add_argument(
        "--jobs",
        type=positive_int,
        default=None,
        help="processes that parse files in a large refresh (default: one per core, at most 8)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--list-skipped", action="store_true", help="print every skipped file with its reason"
    )


def run(args: argparse.Namespace) -> int:
    root: Path = args.path
    if not root.is_dir():
        raise CommandError(f"not a folder: {root}")
    from indexer.workspace import WorkspaceIndex

    progress = None if args.quiet or not sys.stderr.isatty() else _ProgressBar()
    policy = SkipPolicy(max_file_bytes=max_file_bytes(args.max_file_kb))
    with WorkspaceIndex(root, db_path=args.db, policy=policy, workers=args.jobs) as index:
        report = index.refresh(progress=progress)
        counts = index.store.counts()
        db_path = index.store.db_path
    if progress is not None:
        progress.finish()
    print(
        f"indexed {report.indexed} files ({report.added} new, {report.updated} changed), "
        f"{report.unchanged} unchanged, {report.deleted} deleted, in {report.seconds:.2f} s"
    )
    print(
        f"index: {counts['files']} files, {counts['symbols']} symbols, {counts['chunks']} chunks in {db_path}"
    )
    reasons = report.skipped_by_reason()
    if reasons:
        print("skipped: " + ", ".join(f"{count} {reason}" for reason, count in reasons.items()))
    if args.list_skipped:
        for path, reason in report.skipped:
            print(f"  {path}: {reason}")
    return 0


class _ProgressBar:
    """A one-line progress bar on stderr."""

    def __init__(self, width: int = 30) -> None:
        self.width = width
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if done != total and done % 25:
            return
        filled = self.width * done // max(total, 1)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} files")
        sys.stderr.flush()
        self.drawn = True

    def finish(self) -> None:
        if self.drawn:
            sys.stderr.write("\n")
