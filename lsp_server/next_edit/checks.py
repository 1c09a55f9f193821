"""Never worse than silence: the checks a predicted edit passes before it is shown.

A prediction stays quiet, with its reason, when it changes nothing, when it changes only layout
(blank lines, or spacing that is not a re-indent by whole indentation steps: a formatter's job, and
what SmolLM2's copies of a region got wrong in 3 of the 5 edits it showed where the true history had
no further change, `codedraft bench next-edit`), when it touches what the user's last edit just wrote
or would restore the text that edit replaced (an undo the user did not ask for), or when the file
would have more syntax errors than it has now (a file that does not parse where it did). Each check
returns the reason to stay quiet, or None to show.
"""

from __future__ import annotations

import math

from lsp_server.completion.syntax import MAX_PARSE_CHARS, error_count, language_spec, parse
from lsp_server.next_edit.diffs import FileEdit, changed_span

NO_CHANGE = "the predicted edit changes nothing"
REVERTS = "the predicted edit would undo the last edit"
TOUCHES_EDIT = "the predicted edit rewrites what was just typed"
BREAKS_PARSE = "the file would no longer parse where it did"
LAYOUT_ONLY = "the predicted edit changes only blank lines or spacing"


def quiet_reason(language: str | None, text: str, predicted: str, last_edit: FileEdit | None) -> str | None:
    """Why ``predicted`` (the whole document with the prediction made) must not be shown in place
    of ``text`` (the document now), given the user's ``last_edit`` of this document (None: none
    recorded); None when it may be shown."""
    if predicted == text:
        return NO_CHANGE
    if layout_only(text, predicted):
        return LAYOUT_ONLY
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


def layout_only(text: str, predicted: str) -> bool:
    """Whether ``predicted`` differs from ``text`` only in blank lines and spacing, other than by
    re-indenting lines by whole steps of the text's indentation (as after wrapping code in a block)."""
    start, old_end, new_end = changed_span(text, predicted)
    first = text.rfind("\n", 0, start) + 1
    old = [line for line in _through_line_end(text, first, old_end) if line.strip()]
    new = [line for line in _through_line_end(predicted, first, new_end) if line.strip()]
    if [line.split() for line in old] != [line.split() for line in new]:
        return False  # a word changed, or a line was added or removed
    step = _indent_step(text)
    shifts = [_width(b) - _width(a) for a, b in zip(old, new, strict=True)]
    re_indent = all(a.lstrip() == b.lstrip() for a, b in zip(old, new, strict=True)) and all(
        shift % step == 0 for shift in shifts
    )
    return not (re_indent and any(shifts))


def _through_line_end(text: str, start: int, end: int) -> list[str]:
    """The lines of ``text`` from ``start`` (a line start) through the line holding ``end``."""
    line_end = text.find("\n", max(start, end))
    return text[start : len(text) if line_end == -1 else line_end].split("\n")


def _width(line: str) -> int:
    return len(line) - len(line.lstrip())


def _indent_step(text: str) -> int:
    """The text's indentation unit: the greatest common divisor of its lines' indentation widths (a
    tab counts as one), 4 when no line is indented."""
    widths = {_width(line) for line in text.split("\n") if line.strip()} - {0}
    return math.gcd(*widths) if widths else 4
