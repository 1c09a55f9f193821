"""The repetition detector and guard on token ids of a real tokenizer: the loops a small model falls
into are stopped early and cut back to whole lines; legitimate repetition is left alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from tokenizers import Tokenizer

from inference.engine.repetition import Loop, RepetitionDetector, RepetitionGuard

MODEL_DIR = Path(__file__).resolve().parents[3] / "models" / "codedraft-base"

LOOPS = {
    # the ghost text: the same two tokens to the end of the line
    "x_forever": ("def fibonacci(n):\n    return " + "x * " * 40 + "x\n", "def fibonacci(n):\n"),
    # the refactor: a list hundreds of items long
    "all_list": ("__all__ = ['a', 'b', 'c', 'c', " + "'d', " * 300 + "]\n", ""),
    # the same line, line after line: kept once
    "same_line": (
        "def f(self):\n" + "    self.value = value\n" * 30,
        "def f(self):\n    self.value = value\n",
    ),
    # a block of two lines repeated
    "same_block": (
        "for item in items:\n" + "    total += item.price\n    count += 1\n" * 20,
        "for item in items:\n    total += item.price\n    count += 1\n",
    ),
}

# Where the guard finds each loop: the detector's defaults need 5 copies over at least 32 tokens.
FOUND = {
    "x_forever": Loop(period=2, start=11, end=43),
    "all_list": Loop(period=3, start=15, end=47),
    "same_line": Loop(period=6, start=5, end=37),
    "same_block": Loop(period=11, start=5, end=60),
}

LEGITIMATE = {
    "cube": "def cube(x):\n    return x * x * x\n",
    "table": "ROWS = [\n" + "".join(f"    ({i}, '{chr(97 + i)}', {i * i}),\n" for i in range(16)) + "]\n",
    "arguments": "call(" + ", ".join(f"arg{i}" for i in range(1, 25)) + ")\n",
    "dict": "d = {\n" + "".join(f"    'key{i}': value{i},\n" for i in range(16)) + "}\n",
    "dividers": "# " + "-" * 76 + "\n# " + "=" * 76 + "\n",
    "zero_matrix": "grid = [\n" + "    [0, 0, 0, 0],\n" * 4 + "]\n",
    "short_zeros": "x = [" + "0, " * 11 + "0]\n",
    "similar_calls": "".join(
        f"    self.assertEqual(parse('{c}'), {i})\n" for i, c in enumerate("abcdefghij")
    ),
}


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer.from_file(str(MODEL_DIR / "tokenizer.json"))


def _guarded(tokenizer: Tokenizer, text: str) -> tuple[str, list[str], Loop | None, int, int]:
    """Feeds text's tokens one at a time as the engine does (stopping at a loop)."""
    ids = tokenizer.encode(text).ids
    guard, deltas, fed = RepetitionGuard(), [], 0
    for token in ids:
        fed += 1
        deltas.append(guard.push(token, tokenizer.decode([token])))
        if guard.loop is not None:
            break
    deltas.append(guard.finish())
    return "".join(deltas), deltas, guard.loop, fed, len(ids)


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_a_loop_is_stopped_early_and_cut_to_whole_lines(tokenizer: Tokenizer, name: str) -> None:
    text, kept = LOOPS[name]
    out, _, loop, fed, total = _guarded(tokenizer, text)
    assert loop is not None
    assert out == kept
    assert fed < total / 2  # most of the loop is never generated
    assert fed == loop.end  # stopped at the token that completes the loop
    assert loop == FOUND[name]  # at least 5 copies over at least 32 tokens


@pytest.mark.parametrize("name", sorted(LEGITIMATE))
def test_legitimate_repetition_passes_unchanged(tokenizer: Tokenizer, name: str) -> None:
    text = LEGITIMATE[name]
    out, _, loop, _, _ = _guarded(tokenizer, text)
    assert loop is None
    assert out == text


def test_text_is_released_a_line_at_a_time(tokenizer: Tokenizer) -> None:
    text = LEGITIMATE["dict"]
    _, deltas, _, _, _ = _guarded(tokenizer, text)
    sent = [d for d in deltas if d]
    assert all(d.endswith("\n") for d in sent)
    assert len(sent) > 5  # not all at the end


def test_detector_reports_the_shortest_period_and_the_run() -> None:
    detector = RepetitionDetector(max_period=8, min_copies=5, min_span=10)
    found = [detector.push(t) for t in [9, 8, *([1, 2] * 5)]]
    assert found[:-1] == [None] * 11
    assert found[-1] == Loop(period=2, start=2, end=12)
    assert detector.longest_run == 8


def test_a_period_longer_than_the_window_is_not_seen() -> None:
    detector = RepetitionDetector(max_period=4, min_copies=2, min_span=2)
    assert all(detector.push(t) is None for t in list(range(5)) * 4)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="max_period"):
        RepetitionDetector(max_period=0)


def test_a_long_line_still_streams_but_never_its_repeating_run(tokenizer: Tokenizer) -> None:
    words = " ".join(f"word{i}" for i in range(200))
    ids = tokenizer.encode(words).ids
    guard = RepetitionGuard(max_hold=16)
    sent = "".join(guard.push(token, tokenizer.decode([token])) for token in ids)
    assert sent == "".join(tokenizer.decode([token]) for token in ids[:-16])  # all but max_hold tokens
    assert sent + guard.finish() == words
    looping = RepetitionGuard(max_hold=16)
    for token in tokenizer.encode("total = " + "x * " * 60).ids:
        looping.push(token, tokenizer.decode([token]))
        if looping.loop is not None:
            break
    assert looping.loop is not None
    # a line longer than max_hold: its start up to the run's first copy was sent, no second copy
    assert looping.text[: looping.released] == "total = x *"
