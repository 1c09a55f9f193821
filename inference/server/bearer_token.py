"""The bearer token of every call (gRPC metadata and HTTP header alike) when the daemon was started
with ``--token-file``: how a client sends it and how a face checks it. No grpc here: the HTTP face and
the clients use it without the gRPC server."""

from __future__ import annotations

import hmac

AUTH_METADATA_KEY = "authorization"
"""The gRPC metadata key of the token (HTTP's ``Authorization`` header, lower-cased as gRPC needs)."""


def bearer_credentials(token: str) -> str:
    """The value a client sends in ``authorization`` (gRPC) or ``Authorization`` (HTTP)."""
    return f"Bearer {token}"


class BearerToken:
    """The one check of ``Bearer <token>`` credentials, for every face.

    The comparison is constant-time so the token cannot be guessed byte by byte from response times.
    """

    def __init__(self, token: str) -> None:
        self._expected = bearer_credentials(token).encode()

    def problem(self, given: str | bytes | None, field: str, where: str) -> str | None:
        """Why credentials ``given`` in ``field`` (as the caller names it, ``where``) are refused, or
        None when they are right."""
        if given is None:
            return f"this daemon needs a token: send '{field}: Bearer TOKEN'"
        given_bytes = given.encode() if isinstance(given, str) else bytes(given)
        if not hmac.compare_digest(given_bytes, self._expected):
            return f"wrong token in {where}"
        return None
