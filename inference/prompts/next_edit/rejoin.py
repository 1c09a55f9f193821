"""Stopping a region's rewrite once it has re-joined the original, so that its unchanged rest is never
decoded.

A next-edit reply copies most of its region. The reply is compared, as it streams, with the reply
that changes nothing (``unchanged``: each format's ``unchanged_reply``). While the reply is a prefix
of it, the model is copying and goes on (prompt lookup verifies copied text in few passes). Once it
has diverged, at each line end: when its last ``REJOIN_LINES`` complete lines, all written after the
line where it diverged and holding at least ``MIN_REJOIN_CHARS`` non-blank characters between them,
equal consecutive complete lines of ``unchanged`` at or after the line where it diverged there, the
rewrite has re-joined the original. It stops there, and ``unchanged``'s text after those lines is
appended as if the model had copied it.

So the predicted edit is the first change the model makes; a second change further down the region
is left to the next request, after the user has taken the first. A rewrite that never re-joins runs
as before, to its end or its token limit.
"""

from __future__ import annotations

from collections.abc import Callable

REJOIN_LINES = 2
MIN_REJOIN_CHARS = 4

RejoinRule = Callable[[str], tuple[int, str] | None]


def rejoin_rule(unchanged: str) -> RejoinRule:
    """The rule for a reply whose no-change form is ``unchanged``: called with the reply so far, it
    answers None (go on), or ``(cut, rest)``: keep the reply's first ``cut`` characters (up to the
    end of the re-joined lines), then ``rest``, and stop."""
    lines = unchanged.split("\n")
    # Offsets in `unchanged` just after each of its line ends: line i ends before starts[i + 1].
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def rule(reply: str) -> tuple[int, str] | None:
        if unchanged.startswith(reply):
            return None
        diverged = next(
            (i for i, (a, b) in enumerate(zip(reply, unchanged, strict=False)) if a != b), len(unchanged)
        )
        cut = reply.rfind("\n") + 1
        written = reply[:cut].split("\n")[:-1]  # the reply's complete lines
        first_after = reply.count("\n", 0, diverged) + 1  # the reply's first line after the divergence
        if len(written) - REJOIN_LINES < first_after:
            return None
        tail = written[-REJOIN_LINES:]
        if sum(len(line.strip()) for line in tail) < MIN_REJOIN_CHARS:
            return None
        # Only complete lines of `unchanged` (a line end follows them) can match complete lines.
        for start in range(unchanged.count("\n", 0, diverged), len(lines) - REJOIN_LINES):
            if lines[start : start + REJOIN_LINES] == tail:
                return cut, unchanged[starts[start + REJOIN_LINES] :]
        return None

    return rule
