"""The user's recent edits in one workspace, in memory only: the input every next-edit model reads.

Snapshots of each open document come in as the editor changes it (whole texts, or LSP content
changes applied here). Consecutive changes close in time and place (a burst of typing) make one
edit; a change that restores the text before the file's last edit (an undo) removes that edit; an
applied suggestion is an edit of its own, marked accepted. Bounded: at most ``MAX_EDITS`` edits
whose diffs add up to at most ``MAX_TOKENS`` estimated tokens, the oldest dropped first.

Invariant: each edit's ``before`` is the text the editor had at some version and its ``after`` the
text of a later version, so a diff never shows a change the user did not make. A snapshot that does
not follow the last one (a version out of order, a file reloaded from disk, a change that does not
apply) drops that file's edits and starts again from the new text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from indexer.positions import cursor_offset
from indexer.token_estimate import DEFAULT_ESTIMATE, TokenEstimate
from lsp_server.next_edit.diffs import FileEdit, changed_lines

MAX_EDITS = 15
MAX_TOKENS = 3000
BURST_SECONDS = 2.0
"""Changes less than this apart, in nearby lines, are one burst of typing (one edit)."""
BURST_LINES = 2
"""How far (in lines) a change may be from the burst's changed lines and still belong to it."""

Position = tuple[int, int]  # (line, UTF-16 column), as LSP counts them


@dataclass(frozen=True)
class ContentChange:
    """One LSP ``TextDocumentContentChangeEvent``: ``range`` None replaces the whole text."""

    text: str
    range: tuple[Position, Position] | None = None


@dataclass
class _Document:
    version: int
    text: str


class EditHistory:
    """One workspace's recent edits. Not thread-safe: the language server calls it from its event
    loop. ``now`` arguments are seconds on any monotonic clock the caller keeps."""

    def __init__(
        self,
        max_edits: int = MAX_EDITS,
        max_tokens: int = MAX_TOKENS,
        estimate: TokenEstimate = DEFAULT_ESTIMATE,
    ) -> None:
        self.max_edits = max_edits
        self.max_tokens = max_tokens
        self.estimate = estimate
        self._documents: dict[str, _Document] = {}
        self._edits: list[FileEdit] = []  # oldest first
        self._expected: dict[str, str] = {}  # path -> its text once a suggestion is applied
        self._prompt_start: FileEdit | None = None  # the oldest edit of the last prompt's history

    def edits(self, max_tokens: int | None = None) -> list[FileEdit]:
        """The edits to send, oldest first, within the bounds (the newest ones that fit; at most
        ``max_tokens`` of diffs when given, within the history's own bound)."""
        return self._newest(self.max_tokens if max_tokens is None else min(max_tokens, self.max_tokens))

    def prompt_edits(self, max_tokens: int) -> list[FileEdit]:
        """The edits for a prompt of at most ``max_tokens`` of diffs, oldest first, from a start that
        stays put while the edits after it fit: a prompt's history then only grows at its end, so the
        daemon's cache keeps it across predictions. When the edits from that start no longer fit,
        the start moves up to the newest edits that fill half of ``max_tokens`` (the prompt changes
        there once, not at every new edit as a sliding window would)."""
        limit = min(max_tokens, self.max_tokens)
        start = next((i for i, edit in enumerate(self._edits) if edit is self._prompt_start), None)
        if start is not None:
            window = self._edits[start:]
            if len(window) <= self.max_edits and sum(self.estimate.tokens(e.diff) for e in window) <= limit:
                return list(window)
        window = self._newest(limit // 2) or self._newest(limit)
        self._prompt_start = window[0] if window else None
        return window

    def _newest(self, limit: int) -> list[FileEdit]:
        kept: list[FileEdit] = []
        tokens = 0
        for edit in reversed(self._edits):
            tokens += self.estimate.tokens(edit.diff)
            if tokens > limit or len(kept) == self.max_edits:
                break
            kept.append(edit)
        return kept[::-1]

    def text(self, path: str) -> str | None:
        """The last text seen of ``path``; None when it is not tracked."""
        document = self._documents.get(path)
        return None if document is None else document.text

    def expect_accepted(self, path: str, text: str) -> None:
        """A suggestion is being applied to ``path``: the change that makes its text ``text`` is
        recorded as an accepted edit (the editor reports it like any other change)."""
        self._expected[path] = text

    def open(self, path: str, version: int, text: str) -> None:
        """A document the editor opened (or one seen for the first time): its text starts no edit."""
        self._documents[path] = _Document(version, text)

    def close(self, path: str) -> None:
        """A closed document: its edits stay, its text is forgotten (reopening starts afresh)."""
        self._documents.pop(path, None)

    def reload(self, path: str, version: int, text: str) -> None:
        """The file changed under the editor (on disk, by another tool): its edits are dropped."""
        self._drop_file(path)
        self._documents[path] = _Document(version, text)

    def change(self, path: str, version: int, text: str, now: float, accepted: bool = False) -> None:
        """The document's whole text at ``version``; ``accepted`` when the change applied a suggestion."""
        if self._expected.get(path) == text:
            del self._expected[path]
            accepted = True
        document = self._documents.get(path)
        if document is None:
            self.open(path, version, text)
            return
        if version <= document.version:
            if text != document.text:
                self.reload(path, version, text)
            return
        before = document.text
        document.version, document.text = version, text
        if text != before:
            self._record(path, before, text, now, accepted)

    def apply_changes(
        self, path: str, version: int, changes: Sequence[ContentChange], now: float, accepted: bool = False
    ) -> bool:
        """LSP content changes at ``version``, applied to the last text; False when they do not apply
        (unknown document, version out of order, a range past the end): the file's edits are then
        dropped and it is tracked again from its next whole text."""
        document = self._documents.get(path)
        text = document.text if document is not None else None
        if document is None or version <= document.version:
            text = None
        for content in changes:
            if text is None:
                break
            text = _applied(text, content)
        if text is None:
            self._drop_file(path)
            self._documents.pop(path, None)
            return False
        self.change(path, version, text, now, accepted)
        return True

    def _record(self, path: str, before: str, after: str, now: float, accepted: bool) -> None:
        index = next((i for i in range(len(self._edits) - 1, -1, -1) if self._edits[i].path == path), None)
        if index is not None and after == self._edits[index].before:  # an undo of the file's last edit
            del self._edits[index]
            return
        last = self._edits[-1] if self._edits else None
        if (
            last is not None
            and index == len(self._edits) - 1
            and not (accepted or last.accepted)
            and _same_burst(last, after, now)
        ):
            self._edits[-1] = replace(last, after=after, at=now)
            return
        self._edits.append(FileEdit(path, before, after, now, accepted))
        self._trim()

    def _trim(self) -> None:
        # Keep what edits() could send; older edits could never reach a prompt again.
        del self._edits[: max(0, len(self._edits) - self.max_edits)]

    def _drop_file(self, path: str) -> None:
        self._edits = [edit for edit in self._edits if edit.path != path]


def _same_burst(last: FileEdit, after: str, now: float) -> bool:
    """Whether changing ``last.after`` into ``after`` continues ``last`` (close in time and lines)."""
    if now - last.at > BURST_SECONDS:
        return False
    burst_start, _, burst_end = changed_lines(last.before, last.after)
    start, end, _ = changed_lines(last.after, after)
    # Lines apart: from the burst's last changed line down to the change, or from the change up to it.
    return start - (burst_end - 1) <= BURST_LINES and burst_start - (end - 1) <= BURST_LINES


def _applied(text: str, change: ContentChange) -> str | None:
    """``text`` with one content change applied, None when its range lies past the last line."""
    if change.range is None:
        return change.text
    (start_line, start_column), (end_line, end_column) = change.range
    lines = text.count("\n")
    if not 0 <= start_line <= end_line <= lines or min(start_column, end_column) < 0:
        return None
    start = cursor_offset(text, start_line, start_column)
    end = cursor_offset(text, end_line, end_column)
    if end < start:
        return None
    return text[:start] + change.text + text[end:]
