"""``codedraft context``: the snippets retrieval would send for a position, and why."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from codedraft.errors import CommandError
from codedraft.values import FilePosition, file_position, positive_int
from codedraft.workspace_root import workspace_of

HELP = "print the snippets retrieval would send for FILE:LINE:COL (counting from 1), with source and score"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("position", type=file_position, metavar="FILE:LINE:COL", help="the cursor, from 1")
    parser.add_argument(
        "--workspace",
        type=Path,
        default=None,
        help="the workspace folder (default: the nearest enclosing indexed folder, else the git root, "
        "else FILE's folder)",
    )
    parser.add_argument("--db", type=Path, default=None, help="the index database (default: the cache dir)")
    parser.add_argument(
        "--tokens", type=positive_int, default=1024, help="token budget for all snippets (default: 1024)"
    )
    parser.add_argument("--json", action="store_true", help="print the snippets as a JSON array")


def run(args: argparse.Namespace) -> int:
    position: FilePosition = args.position
    path = position.path.resolve()
    if not path.is_file():
        raise CommandError(f"no such file: {position.path}")
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.split("\n")
    if position.line > len(lines):
        raise CommandError(f"line {position.line} is past the end of {position.path} ({len(lines)} lines)")
    line_text = lines[position.line - 1]
    column = (position.column or 1) - 1
    if column > len(line_text):
        raise CommandError(f"column {column + 1} is past the end of line {position.line} of {position.path}")
    workspace = (args.workspace or find_workspace(path, args.db)).resolve()
    if not path.is_relative_to(workspace):
        raise CommandError(f"{position.path} is not inside the workspace {workspace}")

    from indexer.positions import utf16_length
    from indexer.retrieval.base import RetrievalQuery
    from indexer.workspace import WorkspaceIndex

    with WorkspaceIndex(workspace, db_path=args.db) as index:
        index.refresh()
        relative = index.relative_path(path)
        query = RetrievalQuery(relative, text, position.line - 1, utf16_length(line_text[:column]))
        snippets = index.retrieve(query, token_budget=args.tokens, time_budget_ms=1000)
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "path": snippet.path,
                        "start_line": snippet.start_line + 1,
                        "end_line": snippet.end_line + 1,
                        "sources": list(snippet.sources),
                        "score": round(snippet.score, 6),
                        "text": snippet.text,
                    }
                    for snippet in snippets
                ],
                indent=2,
            )
        )
        return 0
    if not snippets:
        print("no snippets: nothing in the index matches the code around this position")
    for snippet in snippets:
        where = f"{snippet.path}:{snippet.start_line + 1}-{snippet.end_line + 1}"
        print(f"--- {where}  [{'+'.join(snippet.sources)}] {snippet.score:.4f}")
        print(snippet.text.rstrip("\n"))
    return 0


def find_workspace(path: Path, db_path: Path | None) -> Path:
    """The nearest folder above ``path`` that has an index, else its git root, else its folder."""
    from indexer.schema import default_db_path

    for folder in path.parents:
        if db_path is None and default_db_path(folder).exists():
            return folder
    return workspace_of(path)
