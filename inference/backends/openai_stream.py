"""One streamed call to an OpenAI-compatible engine (vLLM, SGLang, llama.cpp's server) over a pooled
aiohttp session, and the engine's failures as errors that carry the gRPC status the daemon reports.

The API key goes into one header and nowhere else: no message built here contains it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from inference.call_status import Failure
from inference.engine.errors import EngineError

# Bodies of error replies are cut to this many characters in messages.
_MAX_ERROR_CHARS = 500
# Keep-alive connections kept open to the engine (per host) between requests.
POOL_CONNECTIONS = 64


class RemoteEngineError(EngineError):
    """The remote engine failed a request; `failure` is how the daemon reports it."""

    def __init__(self, failure: Failure, message: str) -> None:
        super().__init__(message)
        self.failure = failure


def display_url(url: str) -> str:
    """`url` without user:password, for messages and logs."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _failure_for_http(status: int) -> Failure:
    if status in (401, 403):
        return Failure.UNAUTHENTICATED
    if status in (400, 413, 422):
        return Failure.INVALID_ARGUMENT
    if status == 404:
        return Failure.NOT_FOUND
    if status == 429:
        return Failure.RESOURCE_EXHAUSTED
    if status >= 500:
        return Failure.UNAVAILABLE
    return Failure.INTERNAL


def _error_text(body: str) -> str:
    """The message in an error reply: OpenAI's ``{"error": {"message"}}``, FastAPI's ``detail``, or text."""
    try:
        data = json.loads(body)
    except ValueError:
        return body.strip()[:_MAX_ERROR_CHARS]
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:_MAX_ERROR_CHARS]
        if isinstance(error, str):
            return error[:_MAX_ERROR_CHARS]
        if "detail" in data:
            return json.dumps(data["detail"])[:_MAX_ERROR_CHARS]
        if "message" in data:
            return str(data["message"])[:_MAX_ERROR_CHARS]
    return body.strip()[:_MAX_ERROR_CHARS]


class OpenAIEndpoint:
    """A base URL (ending in ``/v1``) and the pooled keep-alive session that calls it.

    Create it inside the event loop that uses it; `close` releases the pool.
    """

    def __init__(self, base_url: str, api_key: str | None = None, ssl: Any = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.shown = display_url(self.base_url)
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._ssl = ssl
        self._session: aiohttp.ClientSession | None = None

    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=POOL_CONNECTIONS, keepalive_timeout=60, ssl=self._ssl)
            self._session = aiohttp.ClientSession(
                connector=connector,
                headers=self._headers,
                timeout=aiohttp.ClientTimeout(total=None, connect=10, sock_connect=10),
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _unreachable(self, error: BaseException) -> RemoteEngineError:
        return RemoteEngineError(Failure.UNAVAILABLE, f"cannot reach the engine at {self.shown}: {error}")

    async def get_json(self, path: str) -> Any:
        """GET `path` (relative to the base URL) and return its JSON; RemoteEngineError on failure."""
        try:
            async with self.session().get(f"{self.base_url}{path}") as reply:
                body = await reply.text()
                if reply.status != 200:
                    raise RemoteEngineError(
                        _failure_for_http(reply.status),
                        f"the engine at {self.shown} answered HTTP {reply.status} to GET {path}: "
                        f"{_error_text(body)}",
                    )
                return json.loads(body)
        except (aiohttp.ClientError, OSError, ValueError) as error:
            raise self._unreachable(error) from None

    async def open_stream(self, path: str, body: dict[str, Any]) -> aiohttp.ClientResponse:
        """POST a streaming request; the open response (status 200), or RemoteEngineError."""
        try:
            reply = await self.session().post(f"{self.base_url}{path}", json=body)
        except (aiohttp.ClientError, OSError) as error:
            raise self._unreachable(error) from None
        if reply.status != 200:
            text = await reply.text()
            reply.release()
            raise RemoteEngineError(
                _failure_for_http(reply.status),
                f"the engine at {self.shown} refused the request (HTTP {reply.status}): {_error_text(text)}",
            )
        return reply


async def sse_events(reply: aiohttp.ClientResponse) -> AsyncIterator[dict[str, Any]]:
    """The JSON objects of a server-sent event stream, until ``data: [DONE]`` or the end of the body.

    An event that carries ``error`` (an engine failing mid-stream) raises RemoteEngineError.
    """
    async for raw in reply.content:
        line = raw.decode("utf-8", errors="replace").strip()
        if not line.startswith("data:"):
            continue
        data = line[len("data:") :].strip()
        if data == "[DONE]":
            return
        try:
            event = json.loads(data)
        except ValueError:
            raise RemoteEngineError(
                Failure.INTERNAL, f"the engine sent an event that is not JSON: {data[:200]}"
            ) from None
        if isinstance(event, dict) and event.get("error"):
            raise RemoteEngineError(Failure.INTERNAL, f"the engine failed mid-stream: {_error_text(data)}")
        if isinstance(event, dict):
            yield event
