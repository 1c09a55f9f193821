"""Whether a suggestion is one line or a block: asked for from the cursor, kept from the model's
confidence in its later lines.

The cursor decides what is asked for. Continue and Tabby complete one line where the cursor is inside
a line (text after it) and a block elsewhere; codedraft asks for a block only where one is the likely
next thing to write: on an otherwise blank line under a line that opens a block (``def f(a):``,
``if (x) {``), deeper than that line, or at the end of such a line itself. At the end of a statement,
on a blank line between statements or in a comment the request stops at the first line end, so the
daemon spends no time on lines that would not be shown.

Inside a line (``CursorContext.inside_a_line``) the suggestion is one line or nothing. The request is
not stopped at the line end, so post-processing judges the model's whole reply (a prefix-only model's
reply already stops where it runs into the line's rest, ``inference.prompts.prefix_only``), and what is
left is shown only when it is one line (``quiet_reason``: ``BLOCK_INSIDE_A_LINE``); ``prefer_parsable``
drops one after which the file parses worse. Stopped at the line end and kept when nothing parsed,
SmolLM2's ``):`` at ``def total(amount|, count):`` was shown and broke the line (the VS Code e2e, 4
December). Measured by ``codedraft bench model --inside-line-cases`` (docs/benchmarks.md#model).

The model's figures decide how much of a block is kept. Each later line (after the first non-blank
one, which the confidence gate judges) is shown only while it and every non-blank later line before it
reach the model's later-lines operating point: a threshold on the line's mean or least token
log-probability (``RequestFigures.lines``), measured per model by ``codedraft bench model`` where the
later lines of a block are exactly right often enough to be worth reading, and written under
``later_lines`` in the calibrations beside the gate's (``calibrations.json``). A model nobody measured
gets ``LATER_CONSERVATIVE``. A measured model whose later lines never reach that precision keeps one
line (``ONE_LINE``: threshold ``inf``, ``null`` in the file), and is asked for one line at block
cursors too. ``completion.confidence`` moves this point as it moves the gate's: ``off`` keeps whole
blocks, a target precision picks the least strict point reaching it. A reply without figures (a
remote engine) is kept whole, as the gate shows it.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.confidence_gate import (
    CALIBRATIONS,
    Calibration,
    LineFigures,
    OperatingPoint,
    for_precision,
)
from lsp_server.completion.postprocess.context import CursorContext, indent_width
from lsp_server.completion.postprocess.drop_open_tail import without_open_tail
from lsp_server.completion.postprocess.stop_at_block_end import opens_block
from lsp_server.completion.trigger import text_context

log = logging.getLogger(__name__)

BLOCK = "block"
LINE = "line"
LATER_FEATURES = ("mean", "min")
"""The figures a later line may be judged by: its tokens' mean and least log-probability."""
LATER_CONSERVATIVE = OperatingPoint("min", -0.1)
"""For a model nobody measured: keep a later line only when each of its tokens had a probability of
at least 0.90 (none of the 250 later lines the default model wrote at block cursors was that sure, see
docs/benchmarks.md#model)."""
ONE_LINE = OperatingPoint("min", math.inf)
"""Keeps no later line."""
BLOCK_INSIDE_A_LINE = "a block inside a line"
"""The status's reason for a suggestion kept back at a cursor inside a line: it spans several lines."""


def quiet_reason(context: CursorContext, text: str) -> str | None:
    """Why the post-processed suggestion ``text`` is not shown at ``context``'s cursor, None to show
    it: inside a line, a suggestion of several lines (module docstring)."""
    if context.inside_a_line and "\n" in text:
        return BLOCK_INSIDE_A_LINE
    return None


def cursor_shape(context: CursorContext) -> str:
    """``BLOCK`` where a block is asked for at this cursor, ``LINE`` elsewhere (module docstring)."""
    if context.inside_a_line:
        return LINE
    if context.line_prefix.strip():
        if not opens_block(context.line_prefix) or text_context(context) == "comment":
            return LINE
        return BLOCK
    above = _line_above(context.prefix, len(context.prefix) - len(context.line_prefix))
    if above is None or not opens_block(above) or context.line_indent <= indent_width(above):
        return LINE
    return BLOCK


def _line_above(prefix: str, line_start: int) -> str | None:
    """The nearest non-blank line of ``prefix`` before the line starting at ``line_start`` (read
    backwards: the document before the cursor may be long)."""
    end = line_start
    while end > 0:
        start = prefix.rfind("\n", 0, end - 1) + 1
        line = prefix[start : end - 1]
        if line.strip():
            return line
        end = start
    return None


def shaped_request(request: pb.CompleteRequest, shape: str) -> pb.CompleteRequest:
    """``request`` as sent for a cursor of ``shape``: a copy stopped at the first line end for
    ``LINE``, the request itself for ``BLOCK``."""
    if shape == BLOCK:
        return request
    shaped = pb.CompleteRequest()
    shaped.CopyFrom(request)
    shaped.sampling.stop.append("\n")
    return shaped


def later_line_values(
    rows: Sequence[str], lines: Sequence[LineFigures], feature: str
) -> list[tuple[int, float]]:
    """(row, value) for each non-blank row after the first non-blank one: the least ``feature`` of
    that row and the non-blank later rows before it (a row is kept only with all of them). A row
    without figures (past the daemon's lines, or of no token) counts as -inf."""
    first = next((i for i, row in enumerate(rows) if row.strip()), len(rows))
    values: list[tuple[int, float]] = []
    running = math.inf
    for index in range(first + 1, len(rows)):
        if not rows[index].strip():
            continue
        figures = lines[index] if index < len(lines) else None
        if figures is None or figures.tokens == 0:
            value = -math.inf
        else:
            value = figures.mean_logprob if feature == "mean" else figures.min_logprob
        running = min(running, value)
        values.append((index, running))
    return values


def kept_text(
    text: str, shape: str, lines: Sequence[LineFigures] | None, point: OperatingPoint | None
) -> str:
    """What is shown of a non-blank suggestion ``text``: up to its first non-blank line, and for a
    ``BLOCK`` the later lines that reach ``point`` (all of them with no point or no figures)."""
    rows = text.split("\n")
    keep = next((i for i, row in enumerate(rows) if row.strip()), len(rows) - 1) + 1
    if shape == BLOCK and (point is None or not lines):
        keep = len(rows)
    elif shape == BLOCK and point is not None and lines:
        for index, value in later_line_values(rows, lines, point.feature):
            if value < point.threshold:
                break
            keep = index + 1
    # Later lines cut by their figures may end on a header whose body was cut: drop it too.
    return "\n".join(without_open_tail(rows[:keep]))


def later_lines_point(setting: str, calibration: Calibration | None) -> OperatingPoint | None:
    """The later-lines point ``completion.confidence`` asks for with this model's calibration (None:
    keep whole blocks)."""
    if setting == "off":
        return None
    if calibration is None:
        return LATER_CONSERVATIVE
    if setting == "auto":
        return calibration.chosen
    return for_precision(calibration.points, float(setting)) or ONE_LINE


def load_later_lines(path: Path = CALIBRATIONS) -> dict[str, Calibration]:
    """The later-lines calibrations by model name; empty (with a warning) when the file is missing or
    malformed. Models measured for the gate only have none."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return {
            name: later_calibration(entry["later_lines"])
            for name, entry in raw.items()
            if "later_lines" in entry
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        log.warning("no later-lines calibrations (%s): %s", path, error)
        return {}


def later_calibration(entry: Mapping[str, Any]) -> Calibration:
    """A ``later_lines`` entry of the calibrations file (a ``null`` threshold keeps one line)."""
    return Calibration(_point(entry["chosen"]), tuple(_point(point) for point in entry["points"]))


def _point(entry: Mapping[str, Any]) -> OperatingPoint:
    threshold = entry["threshold"]
    return OperatingPoint(
        str(entry["feature"]),
        math.inf if threshold is None else float(threshold),
        float(entry["precision"]),
        float(entry["coverage"]),
    )


class BlockOrLine:
    """The completion service's one owner of one line or a block: shapes each request from its
    cursor and keeps the lines of each reply; holds the later-lines calibrations, read once."""

    def __init__(self, path: Path = CALIBRATIONS) -> None:
        self._path = path
        self._calibrations: dict[str, Calibration] | None = None

    def request(
        self, request: pb.CompleteRequest, context: CursorContext, setting: str, model: str
    ) -> pb.CompleteRequest:
        """The request to send at ``context``'s cursor with ``completion.confidence`` and the served
        model's name: one line also at a block cursor where the model would keep no later line."""
        if context.inside_a_line:
            return request  # not stopped at the line end: the whole reply is judged (module docstring)
        shape = cursor_shape(context)
        point = self.point(setting, model)
        if shape == BLOCK and point is not None and point.threshold == math.inf:
            shape = LINE
        return shaped_request(request, shape)

    def kept(
        self, context: CursorContext, text: str, figures: pb.RequestFigures | None, setting: str, model: str
    ) -> str:
        """What is shown of the non-blank suggestion ``text`` at ``context``'s cursor, with the
        daemon's ``figures`` of it, ``completion.confidence`` and the served model's name. Inside a
        line it is kept whole: ``quiet_reason`` has kept a suggestion of several lines back there."""
        if context.inside_a_line:
            return text
        lines = list(figures.lines) if figures is not None else None
        return kept_text(text, cursor_shape(context), lines, self.point(setting, model))

    def point(self, setting: str, model: str) -> OperatingPoint | None:
        """The later-lines point for ``completion.confidence`` and the served model's name."""
        if self._calibrations is None:
            self._calibrations = load_later_lines(self._path)
        return later_lines_point(setting, self._calibrations.get(model))
