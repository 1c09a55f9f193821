"""The JSON-RPC stream cut into message bodies, so that one bad frame loses only itself.

pygls's own reader trusts the stream: a ``Content-Length`` larger than the body swallows the next
message, and since the following header lines then start with the rest of a body, every message after
it; a huge one makes it allocate that much or wait for ever. Here a message ends at its
``Content-Length``, or earlier where the next header starts: valid JSON never holds a raw
``Content-Length: N\\r\\n`` (a raw line break is whitespace between tokens, never inside a string), so a
header inside a body marks a truncated message. Bytes that are no header, and messages above
``max_bytes`` (read past as they stream by, never held), are skipped with a log line.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 256 * 1024 * 1024
"""The largest message body read: far above a 50 MB document sent whole, below what a bad length could
make the server allocate."""

HEADER = re.compile(rb"Content-Length:[ \t]*(\d+)[ \t]*\r\n")
_OTHER_HEADERS = re.compile(rb"(?:[A-Za-z][A-Za-z0-9-]*:[^\r\n]*\r\n)*")
_HEADER_TAIL = 64
"""Bytes kept when dropping bytes that hold no header: a header may be split across two reads."""
_MAX_HEADER_BYTES = 8192
"""Headers that do not end within this many bytes after ``Content-Length`` are not headers."""

ReadChunk = Callable[[], Awaitable[bytes]]
"""The next bytes of the stream as they arrive (at least one), or ``b""`` at its end."""


@dataclass(frozen=True)
class Frame:
    """One message body, or what is left of a bad one.

    ``problem`` is None for a whole message; otherwise it says why ``body`` (possibly empty) is not one.
    """

    body: bytes
    problem: str | None = None


class FrameReader:
    """Message bodies from a byte stream framed by LSP's base protocol (``Content-Length`` headers).

    Invariant: the buffer never holds more than one message of at most ``max_bytes`` plus its headers,
    or ``_HEADER_TAIL`` bytes of skipped input.
    """

    def __init__(self, read_chunk: ReadChunk, max_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self._read = read_chunk
        self._buffer = bytearray()
        self._ended = False
        self._skipped = 0
        self.max_bytes = max_bytes

    async def _fill(self) -> bool:
        """Reads more of the stream; False at its end."""
        if self._ended:
            return False
        chunk = await self._read()
        if not chunk:
            self._ended = True
            return False
        self._buffer += chunk
        return True

    def _skip(self, count: int) -> None:
        self._skipped += count
        del self._buffer[:count]

    def _report_skipped(self) -> None:
        if self._skipped:
            log.warning("skipped %d bytes of the LSP stream that were not part of a message", self._skipped)
            self._skipped = 0

    async def next_frame(self) -> Frame | None:
        """The next message's body (or a bad frame saying why), None at the end of the stream."""
        while True:
            header = HEADER.search(self._buffer)
            if header is None:
                self._skip(max(0, len(self._buffer) - _HEADER_TAIL))
                if not await self._fill():
                    self._report_skipped()
                    return None
                continue
            before = bytes(self._buffer[: header.start()])
            if not _OTHER_HEADERS.fullmatch(before.lstrip(b"\r\n")):
                self._skip(header.start())
                continue
            end = self._buffer.find(b"\r\n\r\n", header.end() - 2)
            if end == -1:
                if len(self._buffer) - header.end() > _MAX_HEADER_BYTES:
                    self._skip(header.end())
                    continue
                if not await self._fill():
                    return None
                continue
            self._report_skipped()
            length = int(header[1])
            del self._buffer[: end + 4]
            if length > self.max_bytes:
                # The body streams by as bytes that hold no header; the next header starts a message.
                return Frame(b"", f"the message is {length} bytes; at most {self.max_bytes} are read")
            return await self._body(length)

    async def _body(self, length: int) -> Frame:
        """The body of ``length`` bytes at the buffer's start, cut short where the next header starts."""
        scanned = 0
        while True:
            cut = HEADER.search(self._buffer, scanned)
            if cut is not None and cut.start() < length:
                body = bytes(self._buffer[: cut.start()])
                # The next message may have put other headers before Content-Length: they stay with
                # the bad body, which is refused as a whole anyway.
                del self._buffer[: cut.start()]
                return Frame(body, f"the message was cut off: {len(body)} of {length} bytes came")
            if len(self._buffer) >= length:
                body = bytes(self._buffer[:length])
                del self._buffer[:length]
                return Frame(body)
            scanned = max(0, len(self._buffer) - _HEADER_TAIL)
            if not await self._fill():
                body = bytes(self._buffer)
                self._buffer.clear()
                return Frame(body, f"the stream ended inside a message: {len(body)} of {length} bytes came")
