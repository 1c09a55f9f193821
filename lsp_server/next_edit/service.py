"""Next-edit suggestions for one workspace: the edit history, the predictions waiting for the user,
and how a prediction is made when the editor asks for one.

A request at a cursor is answered, in order, by: the edits of the last prediction still standing (a
rename's remaining occurrences, stepped through with Tab); the same rename at the other references
of a symbol, when the user's latest edit renamed an identifier (the index, no model call); the same
change wherever else it applies, when the edit makes a rule (``repeated_edits.py``, no model call
either); when it changed a function's parameters, the model's rewrite of the region around each
call site the index knows (a jump away from the cursor); the model's rewrite of the region at the
cursor, diffed into edits. Every prediction passes ``checks.py`` before it is shown; otherwise the
answer is the reason to stay quiet.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from indexer.retrieval.base import RetrievalQuery, Snippet
from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.document_trees import DocumentTrees
from lsp_server.completion.syntax import language_spec
from lsp_server.config import NextEditSettings
from lsp_server.next_edit.checks import quiet_reason
from lsp_server.next_edit.diffs import FileEdit
from lsp_server.next_edit.history import EditHistory
from lsp_server.next_edit.model_request import predicted_text, question_at
from lsp_server.next_edit.pending import PendingEdit, PendingEdits, offset_of
from lsp_server.next_edit.region import RegionEdit, region_edits
from lsp_server.next_edit.renames import JumpTarget, call_sites_after_signature_change, propose_renames
from lsp_server.next_edit.repeated_edits import RepeatedEdits

if TYPE_CHECKING:
    from indexer.store import IndexStore

OFF = "next-edit suggestions are off"
NOTHING = "no edit to predict"
RENAMED = "the rename was offered; nothing more until the next edit"
REPEATED = "the edit's repeats were offered; nothing more until the next edit"
STALE = "the document changed while the model was predicting"
NO_REPLY = "the model's reply was not a rewrite of the region"
TOO_LONG = "the line at the cursor is too long for a next-edit region"
MAX_TRACKED_CHARS = 2_000_000
"""Documents longer than this keep no edit history (diffing them on every keystroke is too slow)."""

PredictEdit = Callable[[pb.PredictEditRequest, float], Awaitable[pb.PredictEditReply]]
Retrieve = Callable[[RetrievalQuery, int, float, threading.Event], list[Snippet]]


class Documents(Protocol):
    """The workspace's documents as the editor has them."""

    def text(self, path: str) -> str | None:
        """The text of ``path`` (workspace-relative): the editor's when open, else the disk's."""

    def language(self, path: str) -> str | None:
        """The LSP language id of ``path``."""

    def open_texts(self) -> Mapping[str, str]:
        """Every open document's text by path."""


@dataclass(frozen=True)
class Answer:
    """The edits to offer (first is shown now), or why there are none; ``figures`` of the model's
    prediction when the model was asked (camelCase, for the editor's status)."""

    edits: list[PendingEdit]
    quiet: str | None = None
    figures: dict[str, float] | None = None


class NextEditService:
    """Keeps the history and the pending predictions; answers prediction requests."""

    def __init__(
        self,
        settings: Callable[[], NextEditSettings],
        documents: Documents,
        store: Callable[[], IndexStore | None],
        predict: PredictEdit,
        retrieve: Retrieve,
        clock: Callable[[], float],
    ) -> None:
        self.settings = settings
        self.documents = documents
        self.store = store
        self.predict_edit = predict
        self.retrieve = retrieve
        self.clock = clock
        self.history = EditHistory()
        self.pending = PendingEdits()
        self._derived: FileEdit | None = None  # the user edit the index was last asked about
        self._renamed: FileEdit | None = None  # the user edit whose rename was offered
        self._repeated: FileEdit | None = None  # the user edit whose rule's repeats were offered
        self._trees = DocumentTrees()  # shared by renames, rules and call sites: one parse per text
        self.rules = RepeatedEdits(self._trees)
        self._call_sites: list[JumpTarget] = []  # calls of a function whose parameters just changed
        self._kept_snippets: dict[str, list[Snippet]] = {}  # path -> its snippets while it is open

    # The editor's documents.

    def opened(self, path: str, version: int, text: str) -> None:
        if len(text) <= MAX_TRACKED_CHARS:
            self.history.open(path, version, text)

    def changed(self, path: str, version: int, text: str) -> None:
        """``path`` is now ``text`` at ``version``: the history records it, the pending edits move
        with it, and a change that applied a pending edit is recorded as accepted."""
        before = self.history.text(path)
        applied = None if before is None else self.pending.changed(path, before, text)
        repeated = self._repeated
        if repeated is not None and repeated.path == path and text == repeated.before:
            self.pending.withdraw("rule")  # the user undid the example: its repeats go with it
            self._repeated = None
        if len(text) > MAX_TRACKED_CHARS:
            self.history.reload(path, version, "")
            return
        if applied is not None:
            self.history.expect_accepted(path, text)
        self.history.change(path, version, text, self.clock())

    def closed(self, path: str) -> None:
        self.history.close(path)
        self.rules.forget(path)
        self._kept_snippets.pop(path, None)

    # The editor's answers.

    def accepted(self, edit_id: str) -> None:
        """The editor applied the edit (its change was recognised already, or comes next)."""
        edit = self.pending.find(edit_id)
        if edit is not None:
            text = self.documents.text(edit.path)
            if text is not None and text[edit.start : edit.end] == edit.old:
                self.history.expect_accepted(edit.path, edit.applied_to(text))
            self.pending.taken(edit_id)

    def rejected(self, edit_id: str) -> None:
        edit = self.pending.find(edit_id)
        if edit is not None and edit.source == "rule":
            self.rules.dismissed()  # that rule is not offered again
        self.pending.dismissed(edit_id)

    # Predictions.

    async def predict(self, path: str, line: int, column: int) -> Answer:
        """The edits to offer with the cursor at (``line``, ``column``) of ``path``."""
        settings = self.settings()
        if not settings.enabled:
            return Answer([], OFF)
        standing = self.pending.offered(self.documents.text)
        if standing:
            return Answer(_nearest_first(standing, path, self.documents.text(path), line, column))
        last = self._last_user_edit()
        if last is not None and last is not self._derived:
            self._derived = last
            renames = await asyncio.to_thread(self._renames, last)
            if renames:
                self._renamed = last
                return Answer(self.pending.add(renames, "rename"))
            repeats = await asyncio.to_thread(self._repeats, last)
            if repeats:
                self._repeated = last
                return Answer(self.pending.add(repeats, "rule"))
            self._call_sites = await asyncio.to_thread(self._call_sites_of, last)
        if last is not None and last is self._renamed:
            return Answer([], RENAMED)  # the rename was the edit that followed; the model adds nothing
        if last is not None and last is self._repeated:
            return Answer([], REPEATED)  # as after a rename
        if not settings.model:
            return Answer([], NOTHING)
        while self._call_sites:  # a changed signature: the model rewrites each call site in turn
            site = self._call_sites.pop(0)
            answer = await self._model_prediction(settings, site.path, *site.position)
            if answer.edits:
                return answer
        return await self._model_prediction(settings, path, line, column)

    def _last_user_edit(self) -> FileEdit | None:
        edits = [edit for edit in self.history.edits() if not edit.accepted]
        return edits[-1] if edits else None

    def _call_sites_of(self, edit: FileEdit) -> list[JumpTarget]:
        spec = language_spec(self.documents.language(edit.path))
        if spec is None:
            return []
        return call_sites_after_signature_change(
            spec, edit.path, edit.before, edit.after, self.store(), self.documents.open_texts(), self._trees
        )

    def _repeats(self, edit: FileEdit) -> list[tuple[str, int, int, str, str]]:
        spec = language_spec(self.documents.language(edit.path))
        if spec is None:
            return []
        return self.rules.propose(spec, edit, self.store(), self.documents.open_texts())

    def _renames(self, edit: FileEdit) -> list[tuple[str, int, int, str, str]]:
        spec = language_spec(self.documents.language(edit.path))
        if spec is None:
            return []
        proposals = propose_renames(
            spec, edit.path, edit.before, edit.after, self.store(), self.documents.open_texts(), self._trees
        )
        found = []
        for proposal in proposals:
            text = edit.after if proposal.path == edit.path else self.documents.text(proposal.path)
            if text is None:
                continue
            start, end = offset_of(text, proposal.start), offset_of(text, proposal.end)
            found.append((proposal.path, start, end, text[start:end], proposal.text))
        return found

    async def _model_prediction(
        self, settings: NextEditSettings, path: str, line: int, column: int
    ) -> Answer:
        text = self.documents.text(path)
        if text is None:
            return Answer([], NOTHING)
        language = self.documents.language(path)
        cursor = offset_of(text, (line, column))
        snippets = await asyncio.to_thread(self._snippets, settings, path, text, line, column)
        history = self.history.prompt_edits(settings.history_budget_tokens)
        question = question_at(path, language, text, line, cursor, history, snippets, f"next-edit:{path}")
        if question is None:
            return Answer([], TOO_LONG)
        started = self.clock()
        reply = await self.predict_edit(question.request, settings.timeout_ms / 1000)
        figures = {
            "latencyMs": round((self.clock() - started) * 1000, 1),
            "promptTokens": reply.figures.prompt_tokens,
            "reusedTokens": reply.figures.reused_tokens,
            "generatedTokens": reply.figures.generated_tokens,
            "draftAccepted": reply.figures.draft_accepted,
        }
        if self.documents.text(path) != text:
            return Answer([], STALE, figures)
        if not reply.parsed:
            return Answer([], NO_REPLY, figures)
        predicted = predicted_text(text, question, reply.rewritten_region)
        last = self._last_user_edit()
        reason = await asyncio.to_thread(
            quiet_reason, language, text, predicted, last if last is not None and last.path == path else None
        )
        if reason is not None:
            return Answer([], reason, figures)
        edits = region_edits(question.region.text, reply.rewritten_region, question.region.start_line)
        return Answer(self.pending.add(_offsets(path, text, edits), "model"), figures=figures)

    def _snippets(
        self, settings: NextEditSettings, path: str, text: str, line: int, column: int
    ) -> list[Snippet]:
        """The document's snippets: retrieved for its first prediction's cursor and kept while it is
        open (again only while none were found, as while the index is still being built). They open
        the prompt, so the same ones let the daemon reuse all of it up to the history: new ones for a
        cursor that moved far made it compute the whole prompt again, 1,300-1,650 tokens (about 3 s
        on a 2-core CPU), in 3 of 8 later requests of `codedraft bench next-edit`."""
        kept = self._kept_snippets.get(path)
        if kept:
            return kept
        query = RetrievalQuery(path, text, line, column, own_lines_before=20, own_lines_after=20)
        found = self.retrieve(query, settings.context_budget_tokens, 50.0, threading.Event())
        self._kept_snippets[path] = found
        return found


def _offsets(path: str, text: str, edits: list[RegionEdit]) -> list[tuple[str, int, int, str, str]]:
    """The region's edits as character offsets into ``text``."""
    found = []
    for edit in edits:
        start, end = offset_of(text, edit.start), offset_of(text, edit.end)
        found.append((path, start, end, text[start:end], edit.text))
    return found


def _nearest_first(
    edits: list[PendingEdit], path: str, text: str | None, line: int, column: int
) -> list[PendingEdit]:
    """The standing edits with this document's first edit at or after the cursor first (then the
    rest of this document from its start, then other documents), keeping their order otherwise."""
    if text is None:
        return edits
    cursor = offset_of(text, (line, column))
    here = [edit for edit in edits if edit.path == path]
    after = [edit for edit in here if edit.start >= cursor]
    before = [edit for edit in here if edit.start < cursor]
    return (
        sorted(after, key=lambda e: e.start)
        + sorted(before, key=lambda e: e.start)
        + [edit for edit in edits if edit.path != path]
    )
