"""FrameReader: message bodies from a byte stream however it is cut into reads, and bad frames that
lose only themselves."""

from __future__ import annotations

import pytest

from lsp_server.message_frames import Frame, FrameReader


def _reader(data: bytes, chunk: int, max_bytes: int = 1000) -> FrameReader:
    pieces = [data[i : i + chunk] for i in range(0, len(data), chunk)]

    async def read_chunk() -> bytes:
        return pieces.pop(0) if pieces else b""

    return FrameReader(read_chunk, max_bytes)


async def _frames(data: bytes, chunk: int, max_bytes: int = 1000) -> list[Frame]:
    reader = _reader(data, chunk, max_bytes)
    frames = []
    while (frame := await reader.next_frame()) is not None:
        frames.append(frame)
    return frames


def _message(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 4096])
async def test_messages_come_whole_however_the_stream_is_cut(chunk: int) -> None:
    typed = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}"
    data = _message(b'{"a": 1}') + typed + _message(b"[" + b"1," * 100 + b"1]")
    assert await _frames(data, chunk) == [Frame(b'{"a": 1}'), Frame(b"{}"), Frame(b"[" + b"1," * 100 + b"1]")]


@pytest.mark.parametrize("chunk", [1, 5, 4096])
async def test_a_cut_off_message_loses_only_itself(chunk: int) -> None:
    data = b'Content-Length: 40\r\n\r\n{"cut": ' + _message(b'{"next": 1}') + _message(b'{"last": 2}')
    assert await _frames(data, chunk) == [
        Frame(b'{"cut": ', "the message was cut off: 8 of 40 bytes came"),
        Frame(b'{"next": 1}'),
        Frame(b'{"last": 2}'),
    ]


@pytest.mark.parametrize("chunk", [1, 16, 4096])
async def test_a_message_above_the_limit_is_skipped_without_being_held(chunk: int) -> None:
    big = b'{"text": "' + b"x" * 5000 + b'"}'
    data = _message(big) + _message(b'{"next": 1}')
    assert await _frames(data, chunk) == [
        Frame(b"", f"the message is {len(big)} bytes; at most 1000 are read"),
        Frame(b'{"next": 1}'),
    ]


async def test_a_length_that_never_comes_is_cut_at_the_next_header() -> None:
    data = b"Content-Length: 999\r\n\r\n{" + _message(b"{}")
    assert await _frames(data, 4096) == [
        Frame(b"{", "the message was cut off: 1 of 999 bytes came"),
        Frame(b"{}"),
    ]


async def test_junk_between_messages_is_skipped() -> None:
    data = b"hello\r\n\r\n" + _message(b"{}") + b"\x00\xff junk" + _message(b"[]") + b"trailing"
    assert await _frames(data, 3) == [Frame(b"{}"), Frame(b"[]")]


async def test_the_stream_ending_inside_a_message() -> None:
    data = b"Content-Length: 10\r\n\r\n{}"
    assert await _frames(data, 4096) == [
        Frame(b"{}", "the stream ended inside a message: 2 of 10 bytes came")
    ]
