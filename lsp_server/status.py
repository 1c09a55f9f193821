"""What the backend is doing, sent to the editor as ``codedraft/status`` notifications.

Params: ``{state, message, model?, device?, prefixOnly?, index?: {done, total}, lastCompletion?:
{latencyMs, promptTokens, reusedTokens, daemonMs, firstTokenMs, localPrompt, note?}, lastNextEdit?:
{latencyMs, promptTokens, reusedTokens, generatedTokens, draftAccepted}, suppressed?, accepts?: {shown,
accepted, partial, dismissed, rate, gate?: {feature, threshold, calibratedThreshold}}}`` with state one
of loading, indexing, ready, degraded, error. ``lastCompletion`` describes the last suggestion the
daemon answered; when its figures never came, ``promptTokens``, ``reusedTokens`` and ``firstTokenMs``
are null (never an invented 0) and ``note`` says "no figures". ``accepts`` counts what the user did
with the served model's suggestions (``rate``: accepted whole or in part per shown, null before any was
shown) and gives the confidence gate's threshold as adapted to that (``completion/adaptive_threshold.py``).
``prefixOnly`` is true when the model has no fill-in-the-middle tokens: its suggestions are written
from the code above the cursor only (the code below only stops them).
A notification goes out only when something a user would see changed, so typing does not flood the
editor; a degraded daemon is also shown once as a message, not on every keystroke.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

STATUS_NOTIFICATION = "codedraft/status"
INDEX_PROGRESS_INTERVAL_S = 0.25
"""Index progress is sent at most this often (the last report always goes)."""


@dataclass
class BackendStatus:
    """The latest known state of daemon, model and index.

    The published ``state`` puts what needs the user's attention first: a degraded or failed daemon,
    then indexing in progress, then the daemon's own state (loading or ready).
    """

    daemon_state: str = "loading"
    message: str = "starting"
    model: str | None = None
    device: str | None = None
    prefix_only: bool = False
    indexing: bool = False
    index_message: str | None = None
    index_done: int = 0
    index_total: int = 0
    last_completion: dict[str, Any] = field(default_factory=dict)
    last_next_edit: dict[str, float] = field(default_factory=dict)
    suppressed: str | None = None
    accepts: dict[str, Any] = field(default_factory=dict)

    @property
    def state(self) -> str:
        if self.daemon_state in ("degraded", "error") or not self.indexing:
            return self.daemon_state
        return "indexing"

    def to_wire(self) -> dict[str, Any]:
        """The notification's params (camelCase)."""
        message = self.index_message if self.state == "indexing" and self.index_message else self.message
        params: dict[str, Any] = {"state": self.state, "message": message}
        if self.model is not None:
            params["model"] = self.model
        if self.device is not None:
            params["device"] = self.device
        if self.prefix_only:
            params["prefixOnly"] = True
        if self.index_total:
            params["index"] = {"done": self.index_done, "total": self.index_total}
        if self.last_completion:
            params["lastCompletion"] = dict(self.last_completion)
        if self.last_next_edit:
            params["lastNextEdit"] = dict(self.last_next_edit)
        if self.suppressed is not None:
            params["suppressed"] = self.suppressed
        if self.accepts:
            params["accepts"] = dict(self.accepts)
        return params


class StatusReporter:
    """Keeps the :class:`BackendStatus` and notifies the editor of changes.

    ``notify(method, params)`` sends a notification; ``show_message(text)`` shows a warning once.
    Index progress is sent at most every :data:`INDEX_PROGRESS_INTERVAL_S`.
    """

    def __init__(self, notify: Callable[[str, Any], None], show_message: Callable[[str], None]) -> None:
        self.status = BackendStatus()
        self._notify = notify
        self._show_message = show_message
        self._last_sent: dict[str, Any] | None = None
        self._last_progress = float("-inf")
        self._degraded_shown = False

    def update(self, **changes: Any) -> None:
        """Changes fields of the status and notifies if the editor would see a difference."""
        for name, value in changes.items():
            if not hasattr(self.status, name):
                raise AttributeError(f"BackendStatus has no field {name!r}")
            setattr(self.status, name, value)
        if self.status.daemon_state == "degraded" and not self._degraded_shown:
            self._degraded_shown = True
            self._show_message(f"codedraft: {self.status.message}")
        elif self.status.daemon_state == "ready":
            self._degraded_shown = False
        self._send()

    def index_progress(self, done: int, total: int) -> None:
        """Index progress; throttled, except the last report."""
        now = time.monotonic()
        self.status.index_done, self.status.index_total = done, total
        if done < total and now - self._last_progress < INDEX_PROGRESS_INTERVAL_S:
            return
        self._last_progress = now
        self._send()

    def _send(self) -> None:
        params = self.status.to_wire()
        if params != self._last_sent:
            self._last_sent = params
            self._notify(STATUS_NOTIFICATION, params)
