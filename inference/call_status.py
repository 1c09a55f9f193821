"""How a call failed, in words of no transport: every face maps a `Failure` to its own wire (the gRPC
servicer to a status code of the same name, the HTTP face to ``Failure.http_status``).

Torch-free and grpc-free: the engine's backends, the request runner and both faces share it.
"""

from __future__ import annotations

import enum


class Failure(enum.Enum):
    """Why a call did not succeed; the value is the HTTP status that says so."""

    INVALID_ARGUMENT = 400
    UNAUTHENTICATED = 401
    NOT_FOUND = 404
    RESOURCE_EXHAUSTED = 429
    CANCELLED = 499
    INTERNAL = 500
    UNAVAILABLE = 503
    DEADLINE_EXCEEDED = 504

    @property
    def http_status(self) -> int:
        """The HTTP status of this failure (499: the client's request was cancelled, as nginx says)."""
        return self.value


class CallFailed(Exception):
    """A call refused or ended by ``failure``; ``message`` is one line a person can act on."""

    def __init__(self, failure: Failure, message: str) -> None:
        super().__init__(message)
        self.failure = failure
        self.message = message
