"""Mines ``bench/next_edit/httpx_cases.json`` from a git repository's history (run once, offline
afterwards): ``python -m bench.next_edit.mine --git-dir DIR``.

The source is encode/httpx (``--head``, newest first, merges skipped): a typed, idiomatic Python
library that neither this project's models nor its prompts were tuned on. Rules, applied to each
commit's modified (not added, deleted or moved) ``.py`` files of at most ``MAX_CHARS`` characters,
UTF-8, with "\\n" line ends:

* rename: the file's change only replaces one identifier with another, at ``MIN_RENAMED`` or more
  places where it is code (a name to Python's tokenizer, not in a string or comment); the commit may
  touch other files;
* multi: the commit modifies exactly one ``.py`` file, in 2 to ``MAX_BLOCKS`` blocks of at most
  ``MAX_BLOCK_LINES`` lines each, and is no rename;
* silence: the commit modifies exactly one ``.py`` file, in one block of at most ``MAX_BLOCK_LINES``.

Files of ``MIN_CHARS`` to ``MAX_CHARS`` characters. Newest first until each kind has its count; one
case per commit, at most ``PER_PATH`` per file path.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from bench.next_edit.cases import (
    CASES_FILE,
    Case,
    blocks_between,
    code_name_offsets,
    rename_of,
    renamed_offsets,
    save_cases,
)

REPOSITORY = "https://github.com/encode/httpx"
HEAD = "ae1b9f66238f75ced3ced5e4485408435de10768"  # master, 10 December 2025
COUNTS = {"rename": 20, "multi": 30, "silence": 10}
MAX_CHARS = 10_000
MAX_BLOCKS = 5
MAX_BLOCK_LINES = 10
MIN_CHARS = 300
MIN_RENAMED = 3
PER_PATH = 2


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True, text=True, encoding="utf-8"
    ).stdout


def _show(git_dir: Path, revision: str, path: str) -> str | None:
    """The file at ``revision``, or None when it is not UTF-8 or has "\\r" line ends."""
    data = subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"{revision}:{path}"], check=True, capture_output=True
    ).stdout
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\r" in text else text


def _modified_python(git_dir: Path, commit: str) -> tuple[list[str], bool]:
    """The commit's modified ``.py`` files, and whether it also adds, deletes or moves one."""
    modified, other = [], False
    for line in _git(git_dir, "diff-tree", "-r", "--no-commit-id", "--name-status", commit).splitlines():
        status, *paths = line.split("\t")
        if not paths[-1].endswith(".py"):
            continue
        if status == "M":
            modified.append(paths[-1])
        else:
            other = True
    return modified, other


def classify(before: str, after: str, only_python_file: bool) -> str | None:
    """The kind of case a file's change makes under the module's rules, or None."""
    if not MIN_CHARS <= max(len(before), len(after)) <= MAX_CHARS:
        return None
    blocks = blocks_between(before, after)
    if not blocks:
        return None
    renamed = rename_of(before, after)
    if renamed is not None:
        code = code_name_offsets(before, renamed[0])
        in_code = sum(offset in code for offset in renamed_offsets(before, after))
        return "rename" if in_code >= MIN_RENAMED else None
    if not only_python_file or any(max(b.end - b.start, len(b.lines)) > MAX_BLOCK_LINES for b in blocks):
        return None
    if len(blocks) == 1:
        return "silence"
    return "multi" if len(blocks) <= MAX_BLOCKS else None


def mine(git_dir: Path, head: str = HEAD, counts: dict[str, int] = COUNTS) -> list[Case]:
    """The cases of ``git_dir``'s history before ``head``, per the module's rules."""
    found: dict[str, list[Case]] = {kind: [] for kind in counts}
    log = _git(git_dir, "log", "--no-merges", "--format=%H%x09%s", head)
    for entry in log.splitlines():
        if all(len(found[kind]) >= counts[kind] for kind in counts):
            break
        commit, subject = entry.split("\t", 1)
        if not _git(git_dir, "rev-list", "--parents", "-n", "1", commit).split()[1:]:
            continue  # the root commit
        modified, other = _modified_python(git_dir, commit)
        for path in modified:
            before, after = _show(git_dir, f"{commit}^", path), _show(git_dir, commit, path)
            if before is None or after is None:
                continue
            kind = classify(before, after, len(modified) == 1 and not other)
            if kind is None or len(found[kind]) >= counts[kind]:
                continue
            if sum(case.path == path for cases in found.values() for case in cases) >= PER_PATH:
                continue
            found[kind].append(
                Case(
                    name=f"{kind}-{commit[:10]}",
                    commit=commit,
                    subject=subject,
                    path=path,
                    kind=kind,
                    before=before,
                    blocks=blocks_between(before, after),
                    rename=rename_of(before, after) if kind == "rename" else None,
                )
            )
            break
    return [case for kind in counts for case in found[kind]]


def main(argv: list[str]) -> int:
    """Mines the cases and writes them (``--out``, default the committed data file)."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.next_edit.mine", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--git-dir", type=Path, required=True, help=f"a clone (bare is fine) of {REPOSITORY}")
    parser.add_argument("--head", default=HEAD, help="newest commit to mine from (default: the pinned one)")
    parser.add_argument("--out", type=Path, default=CASES_FILE, help="the data file to write")
    args = parser.parse_args(argv)
    cases = mine(args.git_dir, args.head)
    source = {
        "repository": REPOSITORY,
        "head": args.head,
        "rules": {
            "counts": COUNTS,
            "min_chars": MIN_CHARS,
            "max_chars": MAX_CHARS,
            "min_renamed": MIN_RENAMED,
            "per_path": PER_PATH,
            "max_blocks": MAX_BLOCKS,
            "max_block_lines": MAX_BLOCK_LINES,
        },
        "command": "python -m bench.next_edit.mine --git-dir DIR",
    }
    save_cases(cases, source, args.out)
    tally = {kind: sum(case.kind == kind for case in cases) for kind in COUNTS}
    print(f"{len(cases)} cases ({tally}) -> {args.out} ({args.out.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
