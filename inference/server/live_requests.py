"""The requests the daemon is serving now: lookup for Cancel, cancel-previous per session, drain.

This table is the one owner of cancel-previous. It orders calls by their arrival at the servicer,
before their prompts are fitted in worker threads (which can finish out of order), and names the
newer request in the older one's final status. A Complete supersedes the older Complete and the
Prefill of its session; a Prefill supersedes only the older Prefill (the cursor moved on): it never
stops a completion.
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
    """One Complete or Generate call from arrival until its stream ends.

    `stop_status` is set when the daemon (not the engine) decided to stop the request: by Cancel, by a
    newer Complete (or, for a Prefill, a newer Prefill) of the same session, or by shutdown. It
    becomes the call's final status.
    """

    request_id: str
    session_id: str
    supersedable: bool
    prefill: bool = False
    stop_status: tuple[Failure, str] | None = None


class LiveRequests:
    """Registry of live calls by request id, and of the running completion and prefill of each session.

    Invariant: `_by_session[s]` is the id of a live, supersedable, non-prefill request whose session
    is `s`, and `_prefill_by_session[s]` that of a live prefill of session `s`.
    """

    def __init__(self) -> None:
        self._by_id: dict[str, LiveRequest] = {}
        self._by_session: dict[str, str] = {}
        self._prefill_by_session: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, request_id: str) -> bool:
        return request_id in self._by_id

    def get(self, request_id: str) -> LiveRequest | None:
        return self._by_id.get(request_id)

    def add(self, live: LiveRequest) -> list[LiveRequest]:
        """Register `live`; returns the older requests of its session that it supersedes (a completion
        supersedes the session's completion and prefill, a prefill only the session's prefill)."""
        self._by_id[live.request_id] = live
        if not (live.supersedable and live.session_id):
            return []
        tables = [self._prefill_by_session] if live.prefill else [self._by_session, self._prefill_by_session]
        superseded: list[LiveRequest] = []
        for table in tables:
            older_id = table.pop(live.session_id, None)
            older = self._by_id.get(older_id) if older_id is not None else None
            if older is not None:
                older.stop_status = older.stop_status or (
                    Failure.CANCELLED,
                    f"superseded by request {live.request_id} of the same session {live.session_id!r}",
                )
                superseded.append(older)
        (self._prefill_by_session if live.prefill else self._by_session)[live.session_id] = live.request_id
        return superseded

    def remove(self, live: LiveRequest) -> None:
        self._by_id.pop(live.request_id, None)
        for table in (self._by_session, self._prefill_by_session):
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
