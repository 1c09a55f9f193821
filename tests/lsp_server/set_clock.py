"""A stand-in for a module's ``time``, whose ``monotonic()`` says what the test set."""

from __future__ import annotations

import pytest


class SetClock:
    """``monotonic()`` returns :attr:`now`, which only the test moves."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now


def set_clock(monkeypatch: pytest.MonkeyPatch, module: str, now: float = 0.0) -> SetClock:
    """Replaces ``module``'s ``time`` by a :class:`SetClock` at ``now`` for the test."""
    clock = SetClock(now)
    monkeypatch.setattr(f"{module}.time", clock)
    return clock
