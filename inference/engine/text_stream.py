"""Token ids to streamed text deltas: whole UTF-8 characters only, stop strings cut out.

The tokenizer's `IncrementalDecoder` holds back incomplete UTF-8 sequences; on top of that, this
module holds back any tail of the text that could be the start of a stop string, so a stop string is
never half-streamed before it is recognised. A request may also carry a rule over its whole text so
far (`TextRule`; a region's rewrite stops once it re-joins the original,
`inference.prompts.next_edit.rejoin`): when the rule answers, the text is cut where it says, the
rule's text is appended, and the stream stops.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

TextRule = Callable[[str], tuple[int, str] | None]
"""Called with a request's whole streamed text after each delta that holds a line end: None to go
on, or (cut, rest): keep the first `cut` characters (never fewer than were already streamed), then
`rest`, and stop."""


class IncrementalDecoding(Protocol):
    """What `TextStream` needs from a decoder (`inference.tokenizer.IncrementalDecoder`)."""

    def push(self, token_id: int) -> str:
        """The new text for one more token (empty while a character is incomplete)."""
        ...

    def flush(self) -> str:
        """Text still held back, at the end of the stream."""
        ...


class StopStringFilter:
    """Cuts a text stream at the first occurrence of any stop string."""

    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = tuple(stops)
        self._pending = ""
        self.stopped = False

    def push(self, text: str) -> str:
        """Text now safe to emit. After a stop string is seen, `stopped` is True and nothing more comes."""
        if self.stopped:
            return ""
        if not self.stops:
            return text
        buffer = self._pending + text
        hits = [i for i in (buffer.find(stop) for stop in self.stops) if i >= 0]
        if hits:
            self.stopped = True
            self._pending = ""
            return buffer[: min(hits)]
        hold = 0
        for stop in self.stops:
            for n in range(min(len(stop) - 1, len(buffer)), hold, -1):
                if buffer.endswith(stop[:n]):
                    hold = n
                    break
        self._pending = buffer[len(buffer) - hold :] if hold else ""
        return buffer[: len(buffer) - hold]

    def flush(self) -> str:
        """Whatever was held back, at the end of the stream."""
        pending, self._pending = self._pending, ""
        return "" if self.stopped else pending


class RuledText:
    """A text stream under a `TextRule`: passes deltas on until the rule answers, then cuts, appends
    the rule's text, and passes nothing more. Without a rule it passes every delta."""

    def __init__(self, rule: TextRule | None) -> None:
        self._rule = rule
        self._text = ""  # what was passed on, kept only for a rule
        self.stopped = False

    def push(self, delta: str) -> str:
        """The part of `delta` to pass on (with the rule's text when it answers)."""
        if self.stopped:
            return ""
        if self._rule is None:
            return delta
        streamed = len(self._text)
        text = self._text + delta
        answer = self._rule(text) if "\n" in delta else None
        if answer is None:
            self._text = text
            return delta
        cut, rest = answer
        if cut < streamed:
            raise ValueError(f"a text rule cut at {cut}, inside the {streamed} characters streamed")
        self.stopped = True
        self._text = text[:cut] + rest
        return self._text[streamed:]


class TextStream:
    """Decodes one request's output tokens into deltas that are safe to show."""

    def __init__(
        self, decoder: IncrementalDecoding, stops: Sequence[str], rule: TextRule | None = None
    ) -> None:
        self._decoder = decoder
        self._filter = StopStringFilter(stops)
        self._ruled = RuledText(rule)

    @property
    def stopped(self) -> bool:
        """Whether a stop string or the request's text rule has ended the stream."""
        return self._filter.stopped or self._ruled.stopped

    def push(self, token_id: int) -> str:
        """Text now safe to show after one more token."""
        if self._ruled.stopped:
            return ""
        return self._ruled.push(self._filter.push(self._decoder.push(token_id)))

    def finish(self) -> str:
        """The held-back text at the end of the request (empty if a stop string or the rule ended it)."""
        if self._ruled.stopped:
            return ""
        return self._ruled.push(self._filter.push(self._decoder.flush()) + self._filter.flush())
