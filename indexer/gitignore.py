"""``.gitignore`` files, as git reads them: one rule set per directory, the deepest match deciding.

The patterns themselves are ``pathspec``'s ``GitIgnoreSpec`` (git's wildmatch rules, negation,
directory-only patterns); this module adds what git does across nested files: each file's patterns are
relative to its own directory, and a deeper file's match overrides a shallower one's.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pathspec import GitIgnoreSpec

IgnoreRules = GitIgnoreSpec
"""The patterns of one ``.gitignore`` file."""


def parse_rules(lines: Iterable[str]) -> IgnoreRules:
    """The rules of ``.gitignore`` lines (blanks and comments are skipped)."""
    return GitIgnoreSpec.from_lines(lines)


def read_rules(path: Path) -> IgnoreRules:
    """The rules of one ``.gitignore`` file (unreadable files count as empty)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return parse_rules([])
    return parse_rules(text.splitlines())


def is_ignored(rule_sets: list[tuple[str, IgnoreRules]], relative_path: str, is_directory: bool) -> bool:
    """Whether a workspace-relative path (with "/") is ignored.

    ``rule_sets`` holds (directory relative to the workspace, its rules), outermost first; deeper files
    override shallower ones, and within a file the last matching line decides.
    """
    ignored = False
    for base, rules in rule_sets:
        if base:
            if not relative_path.startswith(base + "/"):
                continue
            local = relative_path[len(base) + 1 :]
        else:
            local = relative_path
        # pathspec tells a directory by its trailing slash (for patterns such as ``build/``).
        decision = rules.check_file(local + "/" if is_directory else local).include
        if decision is not None:
            ignored = decision
    return ignored
