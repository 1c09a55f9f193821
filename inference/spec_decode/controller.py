"""Per-request choice of k, and whether speculating pays at all.

k follows the acceptance of the last round: all proposals accepted means the proposer is on a run, so
propose one more next time; fewer than half accepted means the tail of each proposal is wasted work, so
propose one fewer. In `auto` mode the controller also compares the measured cost per emitted token of
speculative rounds with that of plain decoding steps; when speculation is slower it pauses for a
number of steps (doubling on each failed probe, reset when a probe pays) and then probes again.
"""

from __future__ import annotations

from collections.abc import Container

from inference.config import SpecMode, SpeculationConfig

_EMA = 0.3  # weight of the newest measurement


def _ema(old: float | None, new: float) -> float:
    return new if old is None else (1 - _EMA) * old + _EMA * new


class SpeculationController:
    """Adaptive k and, when `can_pause`, the on/off decision for one request."""

    def __init__(self, config: SpeculationConfig, can_pause: bool) -> None:
        self.config = config
        self.can_pause = can_pause
        self.k = config.k_init
        self.acceptance: float | None = None
        self.spec_seconds_per_token: float | None = None
        self._spec_rounds_since_probe = 0
        self._paused_steps = 0
        self._pause_length = config.probe_interval
        self._since_plain = 0

    def should_speculate(self) -> bool:
        """Whether this decode step may speculate; counts down a pause.

        In mode auto, one step in every 2 * probe_interval runs plain even while speculation pays,
        so the price of a plain step it is compared with stays current (a first measurement can be
        an outlier, and nothing else would correct it while speculation runs).
        """
        if self._paused_steps > 0:
            self._paused_steps -= 1
            return False
        if self.can_pause:
            self._since_plain += 1
            if self._since_plain > 2 * self.config.probe_interval:
                self._since_plain = 0
                return False
        return True

    def record_round(
        self, proposed: int, accepted: int, seconds: float, plain_seconds_per_token: float | None
    ) -> None:
        """Account one verified round: `seconds` for proposing and verifying, accepted + 1 tokens out."""
        if proposed <= 0:
            return
        self.acceptance = _ema(self.acceptance, accepted / proposed)
        if accepted == proposed:
            self.k = min(self.k + 1, self.config.k_max)
        elif 2 * accepted < proposed:
            self.k = max(self.k - 1, self.config.k_min)
        self.spec_seconds_per_token = _ema(self.spec_seconds_per_token, seconds / (accepted + 1))
        self._spec_rounds_since_probe += 1
        if not self.can_pause or plain_seconds_per_token is None or self._spec_rounds_since_probe < 2:
            return
        if self.spec_seconds_per_token > plain_seconds_per_token:
            self._paused_steps = self._pause_length
            self._pause_length = min(self._pause_length * 2, 8 * self.config.probe_interval)
            self._spec_rounds_since_probe = 0
            self.spec_seconds_per_token = None
        else:
            self._pause_length = self.config.probe_interval

    @property
    def paused(self) -> bool:
        """Whether speculation is paused for this request now."""
        return self._paused_steps > 0


def controllers_for(
    mode: SpecMode, available: Container[str], config: SpeculationConfig
) -> dict[str, SpeculationController]:
    """One controller per proposer a request in `mode` may use, in the order they are tried.

    Mode auto tries prompt lookup first (free), then the draft model, and may pause either; a named
    mode uses its proposer only and never pauses; a missing proposer (no draft loaded) is skipped.
    """
    names = {SpecMode.OFF: [], SpecMode.NGRAM: ["ngram"], SpecMode.DRAFT: ["draft"]}.get(
        mode, ["ngram", "draft"]
    )
    return {
        name: SpeculationController(config, can_pause=mode == SpecMode.AUTO)
        for name in names
        if name in available
    }
