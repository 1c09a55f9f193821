"""Never worse than silence: the checks a predicted edit passes before it is shown.

A prediction stays quiet, with its reason, when it changes nothing, when it touches what the user's
last edit just wrote or would restore the text that edit replaced (an undo the user did not ask for),
or when the file would have more syntax errors than it has now (a file that does not parse where it
did). Each check returns the reason to stay quiet, or None to show.
"""

from __future__ import annotations

from lsp_server.completion.syntax import MAX_PARSE_CHARS, error_count, language_spec, parse
from lsp_server.next_edit.diffs import FileEdit, changed_span

NO_CHANGE = "the predicted edit changes nothing"
REVERTS = "the predicted edit would undo the last edit"
TOUCHES_EDIT = "the predicted edit rewrites what was just typed"
BREAKS_PARSE = "the file would no longer parse where it did"


def quiet_reason(language: str | None, text: str, predicted: str, last_edit: FileEdit | None) -> str | None:
    """Why ``predicted`` (the whole document with the prediction made) must not be shown in place
    of ``text`` (the document now), given the user's ``last_edit`` of this document (None: none
    recorded); None when it may be shown."""
    if predicted == text:
        return NO_CHANGE
    if last_edit is not None and last_edit.after == text:
        reason = _against_last_edit(last_edit, predicted)
        if reason is not None:
            return reason
    return _parse_reason(language, text, predicted)


def _against_last_edit(last_edit: FileEdit, predicted: str) -> str | None:
    if predicted == last_edit.before:
        return REVERTS
    # What the user's edit wrote is [start, written_end) of the text now; the prediction may add
    # before or after it, not change inside it.
    start, _, written_end = changed_span(last_edit.before, last_edit.after)
    if written_end <= start:
        return None  # a deletion wrote nothing to protect
    change_start, change_end, _ = changed_span(last_edit.after, predicted)
    if change_start < written_end and change_end > start:
        return TOUCHES_EDIT
    return None


def _parse_reason(language: str | None, text: str, predicted: str) -> str | None:
    spec = language_spec(language)
    if spec is None or max(len(text), len(predicted)) > MAX_PARSE_CHARS:
        return None  # no grammar, or too long to parse on a keystroke: as for completions
    if error_count(parse(spec, predicted)) > error_count(parse(spec, text)):
        return BREAKS_PARSE
    return None
