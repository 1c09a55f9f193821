"""The requests the daemon is serving now: lookup for Cancel, cancel-previous per session, drain.

This table is the one owner of cancel-previous. It orders calls by their arrival at the servicer,
before their prompts are fitted in worker threads (which can finish out of order), and names the
newer request in the older one's final status. A Complete supersedes the older Complete and the
Prefill of its session; a Prefill supersedes only the older Prefill (the cursor moved on): it never
stops a completion. A PredictEdit supersedes only the older PredictEdit of its session: ghost text at
the cursor and the next-edit prediction run side by side, neither stops the other.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from inference.call_status import Failure


def request_id_for(given: str, face: str = "") -> str:
    """The id a request is served under: the caller's, else a new unique one (``face`` prefixes it,
    for example ``http-``, so logs tell the faces apart)."""
    return given or f"{face}{uuid.uuid4().hex}"


@dataclass
class LiveRequest:
    """One Complete, Generate, Prefill or PredictEdit call from arrival until its stream ends.

    `stop_status` is set when the daemon (not the engine) decided to stop the request: by Cancel, by a
    newer request of the same session and lane (see the module docstring), or by shutdown. It
    becomes the call's final status.
    """

    request_id: str
    session_id: str
    supersedable: bool
    prefill: bool = False
    next_edit: bool = False
    stop_status: tuple[Failure, str] | None = None
    model: str = "completion"
    """Which served model runs it ("completion" or "chat", `inference.backends.served_models`)."""

    @property
    def lane(self) -> str:
        """Which of the session's running requests this one is: "completion", "prefill" or "next_edit"."""
        return "prefill" if self.prefill else "next_edit" if self.next_edit else "completion"


# The lanes a new request of each lane supersedes in its session.
_SUPERSEDES = {"completion": ("completion", "prefill"), "prefill": ("prefill",), "next_edit": ("next_edit",)}


class LiveRequests:
    """Registry of live calls by request id, and of the running request of each session and lane.

    Invariant: `_by_lane[lane][s]` is the id of a live, supersedable request of that lane whose
    session is `s`.
    """

    def __init__(self) -> None:
        self._by_id: dict[str, LiveRequest] = {}
        self._by_lane: dict[str, dict[str, str]] = {lane: {} for lane in _SUPERSEDES}

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, request_id: str) -> bool:
        return request_id in self._by_id

    def get(self, request_id: str) -> LiveRequest | None:
        return self._by_id.get(request_id)

    def add(self, live: LiveRequest) -> list[LiveRequest]:
        """Register `live`; returns the older requests of its session that it supersedes (a completion
        supersedes the session's completion and prefill, a prefill only the session's prefill, a next
        edit only the session's next edit)."""
        self._by_id[live.request_id] = live
        if not (live.supersedable and live.session_id):
            return []
        superseded: list[LiveRequest] = []
        for table in (self._by_lane[lane] for lane in _SUPERSEDES[live.lane]):
            older_id = table.pop(live.session_id, None)
            older = self._by_id.get(older_id) if older_id is not None else None
            if older is not None:
                older.stop_status = older.stop_status or (
                    Failure.CANCELLED,
                    f"superseded by request {live.request_id} of the same session {live.session_id!r}",
                )
                superseded.append(older)
        self._by_lane[live.lane][live.session_id] = live.request_id
        return superseded

    def remove(self, live: LiveRequest) -> None:
        self._by_id.pop(live.request_id, None)
        for table in self._by_lane.values():
            if table.get(live.session_id) == live.request_id:
                del table[live.session_id]

    def stop(self, request_id: str, failure: Failure, message: str) -> LiveRequest | None:
        """Mark a live request to stop with this status (a first reason wins); None when not live."""
        live = self._by_id.get(request_id)
        if live is not None and live.stop_status is None:
            live.stop_status = (failure, message)
        return live

    def all(self) -> list[LiveRequest]:
        return list(self._by_id.values())
