"""Stopping a generation that has started looping, and holding back the text a stop would cut.

A small model that loses its way repeats itself: ``x * x * x * …`` to the end of the line, or the
same line again and again. `RepetitionDetector` notices that from the token ids as they are emitted,
and `RepetitionGuard` ends the request there (finish reason ``repetition``) so no compute is spent on
the loop, and makes sure the loop's text beyond its first copy never reaches the client.

What counts as a loop: the generated tokens end in a run that repeats with period ``p`` (1 <= p <=
`max_period`), at least `min_copies` copies of it and at least `min_span` tokens in all. Legitimate
code repeats too, but briefly or with variation: ``x * x * x`` is 2.5 copies of a 2-token unit, a table
of similar lines or a dict of similar entries differ in a name or a number on every line, a 4x4 matrix
of zeros is four copies. Requiring five copies and 32 tokens keeps those, and still stops a loop after
a few dozen tokens where an unstopped one would run to ``max_tokens`` (hundreds or thousands).

What is kept when a loop is stopped: the text up to the last line break at or before the end of the
loop's first copy. So a line repeated line after line is kept once (its first copy ends with its own
line break), and a line that loops within itself (``return x * x * x …``, a list of ``'d', 'd', …``)
is dropped whole, since no prefix of it is code anyone meant; everything before that line stays.

Holding back: the cut can reach back to the start of the line where a repeating run began, so text
is released only up to the last line break before the second copy of the longest run that is
repeating now (at most up to the last complete line). Streams therefore arrive a line at a time, and
the rest of the text at the end of the request. A line longer than `RepetitionGuard.max_hold` tokens
is released in part all the same (never the run that repeats now), so a long line still streams; a
loop found later in it then keeps the released start of its line. The detector costs O(`max_period`)
per token.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Loop:
    """A detected loop: generated tokens [start, end) repeat with this period."""

    period: int
    start: int
    end: int

    @property
    def copies(self) -> float:
        """How many copies of the unit the run holds (the last one may be partial)."""
        return (self.end - self.start) / self.period


class RepetitionDetector:
    """Incremental test for a repeating tail of a token sequence.

    Invariant: after n pushes, ``runs[p]`` (1 <= p <= min(n - 1, max_period)) is the number of
    trailing positions i with token[i] == token[i - p]; the last ``runs[p] + p`` tokens then repeat
    with period p.
    """

    def __init__(self, max_period: int = 96, min_copies: int = 5, min_span: int = 32) -> None:
        if max_period < 1 or min_copies < 2 or min_span < 2:
            raise ValueError("need max_period >= 1, min_copies >= 2 and min_span >= 2")
        self.max_period = max_period
        self.min_copies = min_copies
        self.min_span = min_span
        self.count = 0
        self._recent: list[int] = []  # the last max_period tokens, oldest first
        self._runs = [0] * (max_period + 1)
        # The most trailing tokens that repeat the tokens some period back (0: none does).
        self.longest_run = 0

    def push(self, token: int) -> Loop | None:
        """Record one more token; the loop it completes, if any (the shortest period wins)."""
        recent, runs = self._recent, self._runs
        size = len(recent)
        found: Loop | None = None
        best_run = 0
        for p in range(1, size + 1):
            run = runs[p] = runs[p] + 1 if recent[size - p] == token else 0
            if not run:
                continue
            best_run = max(best_run, run)
            span = run + p
            if found is None and span >= self.min_span and span >= self.min_copies * p:
                found = Loop(p, self.count + 1 - span, self.count + 1)
        recent.append(token)
        if size == self.max_period:
            del recent[0]
        self.count += 1
        self.longest_run = best_run
        return found


class RepetitionGuard:
    """One request's detector plus the text it holds back (see the module docstring).

    Feed it every emitted token with the text the stream released for it; it answers with the text
    that is safe to send. Once `loop` is set the request must end; `finish()` then gives nothing more.
    Invariant: ``text[:released]`` has been sent, and it never reaches past a cut a loop could need.
    """

    def __init__(self, detector: RepetitionDetector | None = None, max_hold: int = 128) -> None:
        self.detector = detector or RepetitionDetector()
        self.max_hold = max_hold
        self.loop: Loop | None = None
        self.text = ""
        self.released = 0
        self._ends: list[int] = []  # len(text) after each token

    def push(self, token: int, text: str) -> str:
        """Record a token and its text; returns the text now safe to send."""
        if self.loop is not None:
            return ""
        self.text += text
        self._ends.append(len(self.text))
        loop = self.detector.push(token)
        if loop is not None:
            self.loop = loop
            return self._release_to(self._cut(loop))
        second_copy = self._offset_before(self.detector.count - self.detector.longest_run)
        held_long_enough = self._offset_before(max(self.detector.count - self.max_hold, 0))
        return self._release_to(min(second_copy, max(self._line_start(second_copy), held_long_enough)))

    def finish(self, tail: str = "") -> str:
        """The rest of the text at the end of the request (`tail`: the stream's own held-back text)."""
        if self.loop is not None:
            return ""  # what a loop keeps was released when it was found
        self.text += tail
        return self._release_to(len(self.text))

    def _cut(self, loop: Loop) -> int:
        """Where the text of a stopped loop ends (see the module docstring)."""
        start = self._offset_before(loop.start)
        unit = self.text[start : self._offset_before(loop.start + loop.period)]
        if "\n" not in unit:
            return self._line_start(start)
        # the first line that starts inside the run, kept once
        first_line = start if start == 0 or self.text[start - 1] == "\n" else self.text.index("\n", start) + 1
        return max(first_line + len(unit), self.released)

    def _offset_before(self, token_index: int) -> int:
        return self._ends[token_index - 1] if token_index > 0 else 0

    def _line_start(self, offset: int) -> int:
        """Just after the last line break before `offset` (never before what was sent)."""
        return max(self.text.rfind("\n", 0, offset) + 1, self.released)

    def _release_to(self, offset: int) -> str:
        if offset <= self.released:
            return ""
        out = self.text[self.released : offset]
        self.released = offset
        return out
