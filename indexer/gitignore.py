"""``.gitignore`` patterns, as git reads them: one rule set per directory, the last match deciding."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class IgnoreRule:
    """One pattern line: a regex over paths relative to its ``.gitignore``'s directory."""

    regex: re.Pattern[str]
    negated: bool
    directory_only: bool


def _glob_to_regex(pattern: str) -> str:
    parts: list[str] = []
    index = 0
    while index < len(pattern):
        character = pattern[index]
        if pattern.startswith("**/", index):
            parts.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            parts.append(".*")
            index += 2
        elif character == "*":
            parts.append("[^/]*")
            index += 1
        elif character == "?":
            parts.append("[^/]")
            index += 1
        elif character == "[":
            close = pattern.find("]", index + 2)
            if close == -1:
                parts.append(re.escape(character))
                index += 1
                continue
            body = pattern[index + 1 : close]
            if body.startswith("!"):
                body = "^" + body[1:]
            parts.append("[" + body.replace("\\", "\\\\") + "]")
            index = close + 1
        elif character == "\\" and index + 1 < len(pattern):
            parts.append(re.escape(pattern[index + 1]))
            index += 2
        else:
            parts.append(re.escape(character))
            index += 1
    return "".join(parts)


def parse_rule(line: str) -> IgnoreRule | None:
    """One ``.gitignore`` line as a rule; None for blanks and comments."""
    line = line.rstrip("\n\r")
    if not line.endswith("\\ "):
        line = line.rstrip(" ")
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    directory_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    # A slash anywhere but at the end anchors the pattern to the .gitignore's directory.
    anchored = "/" in line
    body = _glob_to_regex(line.lstrip("/"))
    prefix = "^" if anchored else "^(?:.*/)?"
    return IgnoreRule(re.compile(prefix + body + "$", re.DOTALL), negated, directory_only)


def read_rules(path: Path) -> list[IgnoreRule]:
    """The rules of one ``.gitignore`` file (unreadable files count as empty)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [rule for rule in map(parse_rule, text.splitlines()) if rule is not None]


def is_ignored(rule_sets: list[tuple[str, list[IgnoreRule]]], relative_path: str, is_directory: bool) -> bool:
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
        for rule in rules:
            if rule.directory_only and not is_directory:
                continue
            if rule.regex.match(local):
                ignored = not rule.negated
    return ignored
