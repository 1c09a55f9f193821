"""One line or a block: the cursor's shape, the request it sends, and the later lines kept from the
model's figures."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.block_or_line import (
    BLOCK,
    BLOCK_INSIDE_A_LINE,
    LATER_CONSERVATIVE,
    LINE,
    ONE_LINE,
    BlockOrLine,
    cursor_shape,
    kept_text,
    later_line_values,
    later_lines_point,
    load_later_lines,
    quiet_reason,
    shaped_request,
)
from lsp_server.completion.confidence_gate import Calibration, OperatingPoint
from tests.lsp_server.postprocess.helpers import at_cursor


@pytest.mark.parametrize(
    ("document", "language", "shape"),
    [
        # a blank line under a signature or a block opener, deeper than it: a block
        ("def f(a):\n    |", "python", BLOCK),
        ("def f(a):\n    |\nprint(f(1))\n", "python", BLOCK),
        ("def f(a):\n\n    |\n", "python", BLOCK),
        ("if (x) {\n  |\n}\n", "javascript", BLOCK),
        ("items = [\n    |\n]\n", "python", BLOCK),
        # at the end of the opener itself
        ("def f(a):|\n", "python", BLOCK),
        # not deeper than the opener: the user left its body
        ("def f(a):\n|\n", "python", LINE),
        # a blank line between statements
        ("def f(a):\n    x = 1\n    |\n", "python", LINE),
        # inside a line: text after the cursor
        ("x = foo(a, |)\n", "python", LINE),
        ("def f(a):\n    re|turn a\n", "python", LINE),
        ("def f(a):\n    |return a\n", "python", LINE),
        # the end of a statement
        ("    return a|\n", "python", LINE),
        # a comment that ends as an opener would
        ("# the steps:|\n", "python", LINE),
        # the start of a file
        ("|", "python", LINE),
    ],
)
def test_the_cursor_decides_whether_a_block_is_asked_for(document: str, language: str, shape: str) -> None:
    assert cursor_shape(at_cursor(document, language)) == shape


@pytest.mark.parametrize(
    ("document", "text", "reason"),
    [
        # inside a line: one line is shown, several are kept back
        ("x = foo(|)\n", "a,\n    b", BLOCK_INSIDE_A_LINE),
        ("x = foo(|)\n", "a, b", None),
        ("def total(amount|, count):\n", "_due", None),
        ("def total(amount|, count):\n", "):\n    return amount", BLOCK_INSIDE_A_LINE),
        # a line break alone would split the line too
        ("x = foo(|)\n", "a\n", BLOCK_INSIDE_A_LINE),
        # at a line's end the later lines are kept_text's to judge
        ("def f(a):\n    |\n", "b = a\n    return b", None),
        ("x = |\n", "1\ny = 2", None),
    ],
)
def test_inside_a_line_a_suggestion_of_several_lines_is_kept_back(
    document: str, text: str, reason: str | None
) -> None:
    assert quiet_reason(at_cursor(document), text) == reason


def test_inside_a_line_the_request_and_the_reply_are_not_cut_at_the_line_end() -> None:
    """Stopped at the line's end, SmolLM2's `):\n    return amount` at `def total(amount|, count):`
    became `):`, which broke the line; whole, post-processing and ``quiet_reason`` judge all of it."""
    owner = BlockOrLine()
    request = pb.CompleteRequest(prefix="def total(amount", suffix=", count):\n")
    inside = at_cursor("def total(amount|, count):\n")
    assert owner.request(request, inside, "auto", "any") is request
    assert owner.kept(inside, "_due", None, "auto", "any") == "_due"


def test_a_line_request_stops_at_the_line_end_and_a_block_request_does_not() -> None:
    request = pb.CompleteRequest(prefix="x = ", sampling=pb.SamplingParams(max_tokens=64, stop=["END"]))
    line = shaped_request(request, LINE)
    assert list(line.sampling.stop) == ["END", "\n"]
    assert (line.prefix, line.sampling.max_tokens) == ("x = ", 64)
    assert list(request.sampling.stop) == ["END"]  # the planned request is not changed
    assert shaped_request(request, BLOCK) is request


def figures(*lines: tuple[int, float, float]) -> list[pb.LineConfidence]:
    return [pb.LineConfidence(tokens=t, mean_logprob=mean, min_logprob=least) for t, mean, least in lines]


def test_later_line_values_are_the_least_so_far_over_non_blank_rows() -> None:
    rows = ["", "x = 1", "    y = 2", "", "    z = 3", "    w"]
    # binary fractions: the wire holds float32
    lines = figures(
        (1, -0.5, -0.5), (3, -0.125, -0.25), (4, -0.25, -0.125), (0, 0.0, 0.0), (3, -0.0625, -0.75)
    )
    assert later_line_values(rows, lines, "min") == [(2, -0.125), (4, -0.75), (5, -math.inf)]
    assert later_line_values(rows, lines, "mean") == [(2, -0.25), (4, -0.25), (5, -math.inf)]


STRICT = OperatingPoint("min", -0.5)
LINES = figures((2, -0.125, -0.25), (2, -0.125, -0.375), (2, -1.0, -2.0), (2, -0.125, -0.125))


@pytest.mark.parametrize(
    ("text", "shape", "lines", "point", "kept"),
    [
        # one line at a line cursor, whatever the reply
        ("a\n    b", LINE, LINES, None, "a"),
        ("\n    b\n    c", LINE, LINES, None, "\n    b"),
        # a block is kept whole with no point, or no figures to judge by
        ("a\n    b\n    c\n    d", BLOCK, LINES, None, "a\n    b\n    c\n    d"),
        ("a\n    b\n    c\n    d", BLOCK, [], STRICT, "a\n    b\n    c\n    d"),
        ("a\n    b\n    c\n    d", BLOCK, None, STRICT, "a\n    b\n    c\n    d"),
        # the third line is unsure: it and every line after it go
        ("a\n    b\n    c\n    d", BLOCK, LINES, STRICT, "a\n    b"),
        ("a\n    b\n    c\n    d", BLOCK, LINES, OperatingPoint("mean", -0.125), "a\n    b"),
        ("a\n    b\n    c\n    d", BLOCK, LINES, OperatingPoint("min", -2.0), "a\n    b\n    c\n    d"),
        ("a\n    b\n    c\n    d", BLOCK, LINES, ONE_LINE, "a"),
        # a blank row stays with the line after it
        ("a\n\n    b", BLOCK, figures((2, -0.1, -0.1), (0, 0.0, 0.0), (2, -0.1, -0.1)), STRICT, "a\n\n    b"),
        ("a\n\n    b", BLOCK, figures((2, -0.1, -0.1), (0, 0.0, 0.0), (2, -0.9, -0.9)), STRICT, "a"),
        # rows past the daemon's figures are not shown
        ("a\n    b\n    c", BLOCK, figures((2, -0.1, -0.1), (2, -0.1, -0.1)), STRICT, "a\n    b"),
    ],
)
def test_kept_lines(
    text: str,
    shape: str,
    lines: list[pb.LineConfidence] | None,
    point: OperatingPoint | None,
    kept: str,
) -> None:
    assert kept_text(text, shape, lines, point) == kept


CURVE = (
    OperatingPoint("mean", -0.05, 0.8, 0.1),
    OperatingPoint("mean", -0.2, 0.6, 0.3),
    OperatingPoint("mean", -0.6, 0.4, 1.0),
)
MEASURED = Calibration(CURVE[1], CURVE)


@pytest.mark.parametrize(
    ("setting", "calibration", "point"),
    [
        ("off", MEASURED, None),
        ("auto", None, LATER_CONSERVATIVE),
        ("0.5", None, LATER_CONSERVATIVE),
        ("auto", MEASURED, CURVE[1]),
        ("0.7", MEASURED, CURVE[0]),
        ("0.4", MEASURED, CURVE[2]),
        ("0.9", MEASURED, ONE_LINE),
    ],
)
def test_the_point_follows_the_confidence_setting(
    setting: str, calibration: Calibration | None, point: OperatingPoint | None
) -> None:
    assert later_lines_point(setting, calibration) == point


def _entry(threshold: float | None) -> dict[str, object]:
    point = {"feature": "min", "threshold": threshold, "precision": 0.5, "coverage": 0.25}
    return {"chosen": point, "points": [point]}


def test_later_lines_calibrations_are_read_beside_the_gates(tmp_path: Path) -> None:
    path = tmp_path / "calibrations.json"
    gate_only = {"chosen": {}, "points": []}
    path.write_text(
        json.dumps(
            {
                "a": {**gate_only, "later_lines": _entry(-0.3)},
                "b": {**gate_only, "later_lines": _entry(None)},
                "c": gate_only,
            }
        )
    )
    loaded = load_later_lines(path)
    assert sorted(loaded) == ["a", "b"]
    assert loaded["a"].chosen == OperatingPoint("min", -0.3, 0.5, 0.25)
    assert loaded["b"].chosen.threshold == math.inf  # measured: one line only


def test_a_broken_calibrations_file_warns_and_keeps_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "calibrations.json"
    path.write_text("{not json")
    with caplog.at_level(logging.WARNING):
        assert load_later_lines(path) == {}
    assert "no later-lines calibrations" in caplog.text


def test_the_owner_keeps_lines_by_the_served_models_calibration(tmp_path: Path) -> None:
    path = tmp_path / "calibrations.json"
    path.write_text(json.dumps({"measured": {"chosen": {}, "points": [], "later_lines": _entry(-0.3)}}))
    owner = BlockOrLine(path)
    block = at_cursor("def f(a):\n    |\n")
    reply = pb.RequestFigures(lines=figures((2, -0.1, -0.1), (3, -0.1, -0.2), (3, -0.1, -0.4)))
    text = "b = a\n    c = b\n    return c"
    assert owner.kept(block, text, reply, "auto", "measured") == "b = a\n    c = b"
    assert owner.kept(block, text, reply, "off", "measured") == text
    # a model nobody measured: LATER_CONSERVATIVE (least token log-probability -0.1)
    assert owner.kept(block, text, reply, "auto", "unmeasured") == "b = a"
    assert owner.kept(block, text, None, "auto", "measured") == text
    assert owner.kept(at_cursor("x = |\n"), "1\ny = 2", reply, "off", "measured") == "1"


def test_a_model_that_keeps_one_line_is_asked_for_one_line_at_block_cursors_too(tmp_path: Path) -> None:
    path = tmp_path / "calibrations.json"
    path.write_text(json.dumps({"one": {"chosen": {}, "points": [], "later_lines": _entry(None)}}))
    owner = BlockOrLine(path)
    request = pb.CompleteRequest(prefix="def f(a):\n    ")
    block = at_cursor("def f(a):\n    |\n")
    assert list(owner.request(request, block, "auto", "one").sampling.stop) == ["\n"]
    assert list(owner.request(request, block, "0.5", "one").sampling.stop) == ["\n"]
    assert list(owner.request(request, block, "off", "one").sampling.stop) == []
    assert list(owner.request(request, block, "auto", "unmeasured").sampling.stop) == []
    assert list(owner.request(request, at_cursor("x = |\n"), "off", "one").sampling.stop) == ["\n"]
