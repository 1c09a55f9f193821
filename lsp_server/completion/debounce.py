"""How long to wait after a keystroke before asking the model: longer while the user types fast."""

from __future__ import annotations

import time


class AdaptiveDebounce:
    """Tracks the time between a document's edits and derives the wait before a request.

    The wait is the smoothed interval between keystrokes times ``factor``, clamped to
    ``[min_ms, max_ms]``: a fast typist's next keystroke would supersede the request anyway, so the
    model is asked only once they pause.
    """

    def __init__(self, min_ms: float, max_ms: float, factor: float = 1.5, smoothing: float = 0.3) -> None:
        self.min_ms = min_ms
        self.max_ms = max_ms
        self._factor = factor
        self._smoothing = smoothing
        self._last_edit: dict[str, float] = {}
        self._interval_ms: dict[str, float] = {}

    def edited(self, document: str) -> None:
        """Records an edit of ``document`` now."""
        now = time.monotonic()
        last = self._last_edit.get(document)
        self._last_edit[document] = now
        if last is None:
            return
        gap_ms = (now - last) * 1000.0
        if gap_ms > 2 * self.max_ms / self._factor:
            return  # a pause, not typing rhythm
        previous = self._interval_ms.get(document, gap_ms)
        self._interval_ms[document] = previous + self._smoothing * (gap_ms - previous)

    def delay_ms(self, document: str) -> float:
        """Milliseconds to wait before asking the model for ``document``."""
        interval = self._interval_ms.get(document)
        if interval is None:
            return self.min_ms
        return min(self.max_ms, max(self.min_ms, interval * self._factor))

    def forget(self, document: str) -> None:
        self._last_edit.pop(document, None)
        self._interval_ms.pop(document, None)
