"""What the model is asked for a next edit: the daemon's ``PredictEditRequest`` built from the document
at the cursor, the edit history and the retrieved snippets, and the reply turned back into the whole
document as the model would have it.

The daemon owns the prompt format (as it owns the FIM layout); this module only chooses what goes in:
the editable region around the cursor (``region.py``), a few lines around it that the model reads but
does not rewrite, the region as it was before the user's latest edit when that edit fell in it, the
recent edits oldest first, and snippets from elsewhere in the workspace.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.syntax import MAX_PARSE_CHARS, language_spec, parse
from lsp_server.next_edit.diffs import FileEdit, changed_lines
from lsp_server.next_edit.region import EditableRegion, editable_region

if TYPE_CHECKING:
    from indexer.retrieval.base import Snippet

CONTEXT_LINES = 8
"""Lines before and after the region that the model reads but does not rewrite."""
MAX_CONTEXT_CHARS = 1500
"""At most this many characters of those lines on each side (the nearest lines are kept)."""


@dataclass(frozen=True)
class ModelQuestion:
    """A request for the daemon and the region it asks the model to rewrite."""

    request: pb.PredictEditRequest
    region: EditableRegion


def question_at(
    path: str,
    language: str | None,
    text: str,
    line: int,
    cursor: int,
    history: Sequence[FileEdit],
    snippets: Sequence[Snippet],
    session_id: str,
    max_tokens: int | None = None,
) -> ModelQuestion | None:
    """The request for a prediction at ``line`` (``cursor``: the character offset in ``text``); None
    when the cursor's line alone is too long to make a region of."""
    spec = language_spec(language)
    tree = parse(spec, text) if spec is not None and len(text) <= MAX_PARSE_CHARS else None
    region = editable_region(text, line, tree)
    if region is None:
        return None
    before, starts_file = _lines_before(text, region.start_offset)
    request = pb.PredictEditRequest(
        session_id=session_id,
        path=path,
        language=language or "",
        region=region.text,
        cursor=min(max(cursor - region.start_offset, 0), len(region.text)),
        context_before=before,
        context_after=_lines_after(text, region.end_offset),
        starts_file=starts_file,
        history=[_past_edit(edit) for edit in history],
        snippets=[
            pb.ContextSnippet(
                path=s.path, text=s.text, start_line=s.start_line + 1, source=",".join(s.sources)
            )
            for s in snippets
        ],
    )
    original = _original_region(region, text, history[-1] if history else None, path)
    if original is not None:
        request.original_region = original
    if max_tokens is not None:
        request.sampling.max_tokens = max_tokens
    return ModelQuestion(request, region)


def predicted_text(text: str, question: ModelQuestion, rewritten_region: str) -> str:
    """The whole document with the region replaced by the model's rewrite."""
    region = question.region
    return text[: region.start_offset] + rewritten_region + text[region.end_offset :]


def _past_edit(edit: FileEdit) -> pb.PastEdit:
    return pb.PastEdit(
        path=edit.path,
        diff=edit.diff,
        hunks=[pb.EditHunk(original=h.original, updated=h.updated) for h in edit.hunks],
    )


def _lines_before(text: str, offset: int) -> tuple[str, bool]:
    """Up to ``CONTEXT_LINES`` whole lines before ``offset`` (a line start), within the character
    bound; and whether they reach the start of the file."""
    start = offset
    for _ in range(CONTEXT_LINES):
        if start == 0:
            break
        start = text.rfind("\n", 0, start - 1) + 1
    while offset - start > MAX_CONTEXT_CHARS:
        start = text.index("\n", start) + 1
    return text[start:offset], start == 0


def _lines_after(text: str, offset: int) -> str:
    """Up to ``CONTEXT_LINES`` whole lines from ``offset`` (a line start), within the character bound."""
    end = offset
    for _ in range(CONTEXT_LINES):
        if end >= len(text):
            break
        newline = text.find("\n", end)
        end = len(text) if newline == -1 else newline + 1
    while end - offset > MAX_CONTEXT_CHARS:
        end = text.rfind("\n", offset, end - 1) + 1
        if end <= offset:
            return ""
    return text[offset:end]


def _original_region(region: EditableRegion, text: str, last: FileEdit | None, path: str) -> str | None:
    """The region's lines as they were before ``last``, when ``last`` is this document's latest edit
    and lies inside the region; None otherwise."""
    if last is None or last.path != path or last.after != text:
        return None
    first, old_end, new_end = changed_lines(last.before, last.after)
    if first < region.start_line or new_end > region.end_line:
        return None
    lines = last.before.split("\n")
    end_line = region.end_line + (old_end - new_end)
    original = "\n".join(lines[region.start_line : end_line])
    return original + "\n" if region.text.endswith("\n") and end_line < len(lines) else original
