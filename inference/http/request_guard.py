"""What stands between the network and the HTTP face's handlers: the token check, the body read under
a size and a time limit, and every refusal in OpenAI's error shape.

aiohttp answers an oversize body (413), an unknown path (404) or method (405) with plain text; clients
of the OpenAI API read ``{"error": {...}}``, so those answers are rewritten here. A client that sends
its body slower than ``read_timeout_s`` gets 408, and one that never finishes its headers is closed
after ``IDLE_CLOSE_S`` (aiohttp's keep-alive timer, which also covers a connection before its first
request): neither holds a connection for longer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from inference.http.openai_requests import FaceRequestError
from inference.server.bearer_token import BearerToken

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

READ_TIMEOUT_S = 30.0
"""Longest a request body may take to arrive (a slow or stalled sender gets 408)."""
IDLE_CLOSE_S = 30.0
"""A connection with no complete request for this long is closed (aiohttp's ``keepalive_timeout``)."""

_KINDS = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    405: "invalid_request_error",
    408: "timeout_error",
    413: "invalid_request_error",
}


def error_reply(status: int, message: str, kind: str) -> web.Response:
    """OpenAI's error object, which llama.cpp's clients read too."""
    body = {"error": {"message": message, "type": kind, "code": status}}
    return web.json_response(body, status=status)


def _refusal(error: web.HTTPException, request: web.Request, max_bytes: int) -> web.Response:
    status = error.status
    if status == 413:
        message = f"the request body is larger than {max_bytes} bytes (the daemon's --max-request-mb)"
    elif status == 404:
        message = (
            f"nothing is served at {request.path}: "
            "the daemon serves /v1/completions, /v1/chat/completions, /infill"
        )
    elif status == 405:
        message = f"{request.method} is not allowed on {request.path}"
    else:
        message = error.text or error.reason
    return error_reply(status, message, _KINDS.get(status, "invalid_request_error"))


def guard(token: str | None, max_bytes: int) -> Any:
    """The middleware every request passes: the bearer token when the daemon has one, and aiohttp's
    own refusals rewritten as OpenAI errors."""
    bearer = BearerToken(token) if token else None

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        if bearer is not None:
            given = request.headers.get("Authorization")
            problem = bearer.problem(given, "Authorization", "the 'Authorization' header")
            if problem is not None:
                return error_reply(401, problem, "authentication_error")
        try:
            return await handler(request)
        except web.HTTPException as error:
            if error.status < 400:
                raise
            return _refusal(error, request, max_bytes)

    return check


async def read_json(request: web.Request, timeout_s: float) -> Any:
    """The request's body as JSON. FaceRequestError (400) when it is not JSON; aiohttp's 408 when it
    takes longer than ``timeout_s`` to arrive and 413 when it is too large (both answered by
    :func:`guard`)."""
    try:
        async with asyncio.timeout(timeout_s):
            body = await request.read()
    except TimeoutError:
        raise web.HTTPRequestTimeout(text=f"the request body did not arrive within {timeout_s:g} s") from None
    try:
        return json.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise FaceRequestError(f"the body is not JSON: {error}") from None
