"""The requests the daemon is serving now: lookup for Cancel, cancel-previous per session, drain.

This table is the one owner of cancel-previous. It orders calls by their arrival at the servicer,
before their prompts are fitted in worker threads (which can finish out of order), and names the
newer request in the older one's final status.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc


@dataclass
class LiveRequest:
    """One Complete or Generate call from arrival until its stream ends.

    `stop_status` is set when the daemon (not the engine) decided to stop the request: by Cancel, by a
    newer Complete of the same session, or by shutdown. It becomes the call's final status.
    """

    request_id: str
    session_id: str
    supersedable: bool
    stop_status: tuple[grpc.StatusCode, str] | None = None


class LiveRequests:
    """Registry of live calls by request id, and of the running completion of each session.

    Invariant: `_by_session[s]` is the id of a live, supersedable request whose session is `s`.
    """

    def __init__(self) -> None:
        self._by_id: dict[str, LiveRequest] = {}
        self._by_session: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, request_id: str) -> bool:
        return request_id in self._by_id

    def get(self, request_id: str) -> LiveRequest | None:
        return self._by_id.get(request_id)

    def add(self, live: LiveRequest) -> LiveRequest | None:
        """Register `live`; returns the older completion of its session that it supersedes, if any."""
        self._by_id[live.request_id] = live
        if not (live.supersedable and live.session_id):
            return None
        older_id = self._by_session.get(live.session_id)
        self._by_session[live.session_id] = live.request_id
        older = self._by_id.get(older_id) if older_id is not None else None
        if older is not None:
            older.stop_status = older.stop_status or (
                grpc.StatusCode.CANCELLED,
                f"superseded by request {live.request_id} of the same session {live.session_id!r}",
            )
        return older

    def remove(self, live: LiveRequest) -> None:
        self._by_id.pop(live.request_id, None)
        if self._by_session.get(live.session_id) == live.request_id:
            del self._by_session[live.session_id]

    def stop(self, request_id: str, code: grpc.StatusCode, message: str) -> LiveRequest | None:
        """Mark a live request to stop with this status (a first reason wins); None when not live."""
        live = self._by_id.get(request_id)
        if live is not None and live.stop_status is None:
            live.stop_status = (code, message)
        return live

    def all(self) -> list[LiveRequest]:
        return list(self._by_id.values())
