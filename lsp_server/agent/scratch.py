"""A scratch copy of the workspace that proposed edits are applied to (never the workspace itself)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from lsp_server.rewrite.proposal_check import EditOutsideWorkspace

# Never copied: version control and caches. Tool folders (virtual environments, node_modules) are not
# copied either; the sandbox binds them read-only at their place instead.
SKIPPED = {".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".tox"}
MAX_FILE_BYTES = 8 << 20


def tool_folders(workspace: Path) -> list[Path]:
    """The workspace's own tools the check may need: its virtual environments (with the interpreter
    they point at) and ``node_modules``."""
    found: list[Path] = []
    for child in sorted(workspace.iterdir()) if workspace.is_dir() else []:
        if child.is_dir() and not child.is_symlink() and (child / "pyvenv.cfg").exists():
            found.append(child)
            home = _venv_home(child / "pyvenv.cfg")
            if home is not None and home not in found:
                found.append(home)
        elif child.name == "node_modules" and child.is_dir():
            found.append(child)
    return found


def _venv_home(config: Path) -> Path | None:
    for line in config.read_text(errors="replace").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            bin_dir = Path(value.strip()).resolve()
            return bin_dir.parent if bin_dir.name == "bin" else bin_dir
    return None


class ScratchCopy:
    """A copy of ``workspace`` in a private temporary folder, with the user's unsaved buffers.

    Invariant: ``original`` holds the text every changed file had when the copy was made (None for a
    file that did not exist), so :meth:`revert` restores the copy and :meth:`changes` is the edit.
    """

    def __init__(self, workspace: Path, overlays: dict[str, str] | None = None) -> None:
        self.workspace = workspace.resolve()
        self.base = Path(tempfile.mkdtemp(prefix="codedraft-agent-"))
        self.root = self.base / "ws"
        self.tools = tool_folders(self.workspace)
        skipped_tools = {t.name for t in self.tools if t.parent == self.workspace}
        shutil.copytree(
            self.workspace,
            self.root,
            symlinks=True,
            ignore=lambda folder, names: [
                n
                for n in names
                if n in SKIPPED
                or (Path(folder) == self.workspace and n in skipped_tools)
                or _too_big(Path(folder) / n)
            ],
        )
        for tool in self.tools:
            if tool.is_relative_to(self.workspace):
                (self.root / tool.relative_to(self.workspace)).mkdir(parents=True, exist_ok=True)
        self.original: dict[str, str | None] = {}
        for relative, text in (overlays or {}).items():
            try:
                target = self.path(relative)
            except EditOutsideWorkspace:
                continue  # an open buffer in a tool folder is not part of the copy
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")

    def path(self, relative: str) -> Path:
        """The scratch file for a workspace-relative (or absolute, inside the workspace) path.

        Raises :class:`EditOutsideWorkspace` for a path that leaves the workspace through ``..``, an
        absolute path or a symlink, or that names a tool folder or version control.
        """
        raw = Path(relative)
        if raw.is_absolute():
            if not raw.is_relative_to(self.workspace):
                raise EditOutsideWorkspace(f"refusing {relative}: it is outside the workspace")
            raw = raw.relative_to(self.workspace)
        if not raw.parts or ".." in raw.parts:
            raise EditOutsideWorkspace(f"refusing {relative}: it climbs out of the workspace with ..")
        if raw.parts[0] in SKIPPED or any(raw.parts[0] == t.name for t in self.tools):
            raise EditOutsideWorkspace(f"refusing {relative}: it is a tool or version-control folder")
        candidate = self.root / raw
        if not candidate.resolve().is_relative_to(self.root.resolve()):
            raise EditOutsideWorkspace(f"refusing {relative}: a symlink leads it outside the workspace")
        return candidate

    def read(self, relative: str) -> str | None:
        target = self.path(relative)
        return target.read_text(encoding="utf-8", errors="replace") if target.is_file() else None

    def write(self, relative: str, text: str) -> None:
        """Writes a file of the copy, remembering its original text for :meth:`revert`."""
        target = self.path(relative)
        key = target.relative_to(self.root).as_posix()
        if key not in self.original:
            self.original[key] = self.read(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def changes(self) -> dict[str, tuple[str | None, str]]:
        """Each changed file: (its text before, its text now)."""
        result: dict[str, tuple[str | None, str]] = {}
        for key, before in self.original.items():
            now = self.read(key)
            if now is not None and now != before:
                result[key] = (before, now)
        return result

    def revert(self) -> None:
        """Undoes every write (and whatever a check wrote to those files)."""
        for key, before in self.original.items():
            target = self.root / key
            if before is None:
                target.unlink(missing_ok=True)
            else:
                target.write_text(before, encoding="utf-8")
        self.original.clear()

    def close(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)


def _too_big(path: Path) -> bool:
    try:
        return path.is_file() and not path.is_symlink() and path.stat().st_size > MAX_FILE_BYTES
    except OSError:
        return True
