"""Each framed message decoded and handed to pygls, or answered with JSON-RPC's error for it.

pygls answers nothing to a request whose params do not fit its method's LSP type (a negative
position, a string where an object belongs, missing params): the client would wait for ever. Here a
body that is not JSON gets ParseError (-32700), a message that is no JSON-RPC request or notification
InvalidRequest (-32600), and a request whose params do not fit InvalidParams (-32602) naming the
field, with the request's id where it has one. A notification cannot be answered: it is logged, and a
dropped document change is shown to the user (the server's copy of that document no longer matches).
Lone surrogates, which JSON's ``\\uD800`` escapes carry and UTF-8 (so protobuf, so the daemon) cannot,
become U+FFFD here, once for every path behind: one UTF-16 unit for one, so every position stays.
The frames come from :class:`~lsp_server.message_frames.FrameReader`, the server's only reader of
the stream, over stdio and TCP alike.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, BinaryIO
from urllib.parse import unquote

import cattrs
from cattrs.v import format_exception
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCProtocol

from lsp_server.message_frames import Frame, FrameReader

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
_CHUNK_BYTES = 1 << 20
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""A body holding this may hold a lone surrogate (a pair decodes to one character, a lone one not)."""
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class BadMessage(Exception):
    """A message the server cannot handle: JSON-RPC's error code, a message a person can act on, and
    the request's id when there is one to answer."""

    def __init__(self, code: int, message: str, msg_id: int | str | None, method: str | None) -> None:
        super().__init__(message)
        self.code = code
        self.msg_id = msg_id
        self.method = method


def _describe(error: BaseException, kind: Any) -> str:
    if isinstance(error, ValueError) and not isinstance(error, cattrs.BaseValidationError) and str(error):
        return str(error)  # lsprotocol's range checks say which field and which range
    return format_exception(error, kind)


def _wire_path(line: str) -> str:
    """cattrs's ``@ $.params.text_document`` with the wire's camelCase names."""
    return re.sub(r"_([a-z])", lambda m: m[1].upper(), line.replace("$.", "", 1))


def _params_problem(error: BaseException) -> str:
    cause = error.__cause__
    if isinstance(cause, cattrs.BaseValidationError):
        lines = cattrs.transform_error(cause, format_exception=_describe)
        return "; ".join(_wire_path(line) for line in lines)
    return str(cause or error)


def _without_lone_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings replaced by U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_lone_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {key: _without_lone_surrogates(item) for key, item in value.items()}
    return value


def decode(frame: Frame, protocol: JsonRPCProtocol) -> Any:
    """The message ``frame`` holds, structured by pygls; BadMessage when it is none."""
    if frame.problem is not None:
        raise BadMessage(PARSE_ERROR, frame.problem, None, None)
    try:
        data = json.loads(frame.body.decode("utf-8"))  # LSP's only charset
    except (ValueError, UnicodeDecodeError) as error:
        raise BadMessage(PARSE_ERROR, f"the message is not JSON: {error}", None, None) from None
    if _SURROGATE_ESCAPE.search(frame.body):
        data = _without_lone_surrogates(data)
    if not isinstance(data, dict):
        raise BadMessage(INVALID_REQUEST, "a message must be one JSON object, not a batch", None, None)
    msg_id = data.get("id")
    if isinstance(msg_id, bool) or not isinstance(msg_id, int | str):
        msg_id = None
    method = data.get("method")
    if data.get("jsonrpc") != "2.0":
        raise BadMessage(INVALID_REQUEST, 'the message lacks "jsonrpc": "2.0"', msg_id, None)
    if "method" in data and not isinstance(method, str):
        raise BadMessage(INVALID_REQUEST, f'"method" must be a string, got {method!r}', msg_id, None)
    if method is None and not ("result" in data or "error" in data):
        raise BadMessage(INVALID_REQUEST, 'the message has no "method" and is no response', msg_id, None)
    try:
        return protocol.structure_message(data)
    except JsonRpcException as error:
        problem = _params_problem(error)
        raise BadMessage(INVALID_PARAMS, f"bad params for {method}: {problem}", msg_id, method) from None


def _changes_an_unopened_document(message: Any, protocol: JsonRPCProtocol) -> bool:
    """Whether ``message`` changes a document that is not open (pygls would show the user a KeyError)."""
    if not isinstance(message, types.DidChangeTextDocumentNotification):
        return False
    try:
        documents = protocol.workspace.text_documents  # type: ignore[attr-defined]
    except RuntimeError:  # not initialized yet: pygls refuses the message itself
        return False
    return unquote(message.params.text_document.uri) not in documents


def _refuse(bad: BadMessage, protocol: JsonRPCProtocol) -> None:
    log.warning("refused a message%s: %s", f" ({bad.method})" if bad.method else "", bad)
    if bad.method is None or bad.msg_id is not None:
        error = types.ResponseError(code=bad.code, message=str(bad))
        # pygls has no public way to answer a message it could not read
        protocol._send_data(types.ResponseErrorMessage(id=bad.msg_id, error=error))
    elif bad.method.startswith("textDocument/did"):
        protocol.notify(
            types.WINDOW_SHOW_MESSAGE,
            types.ShowMessageParams(
                type=types.MessageType.Warning,
                message=f"codedraft dropped a malformed {bad.method}: its copy of the document may differ "
                f"from the editor's until the document is reopened ({bad})",
            ),
        )


async def serve_frames(frames: FrameReader, protocol: JsonRPCProtocol, stop: threading.Event) -> None:
    """Hands every message of the stream to ``protocol`` until the stream ends or ``stop`` is set."""
    while not stop.is_set():
        frame = await frames.next_frame()
        if frame is None:
            return
        try:
            message = decode(frame, protocol)
        except BadMessage as bad:
            _refuse(bad, protocol)
            continue
        if _changes_an_unopened_document(message, protocol):
            log.warning(
                "ignored a change of %s, which the editor never opened", message.params.text_document.uri
            )
            continue
        try:
            protocol.handle_message(message)
        except Exception:
            log.exception("a message's handler failed")
        # Let the handlers this message started take their first step before the next message is
        # handled, as when each message was read on its own: a didChange's handler feeds the edit
        # history before the accept command that follows it in the same chunk runs.
        await asyncio.sleep(0)


def stdin_frames(stdin: BinaryIO, pool: ThreadPoolExecutor) -> FrameReader:
    """Frames of the stdio stream, read in a worker thread (stdin blocks)."""

    async def read_chunk() -> bytes:
        return await asyncio.get_running_loop().run_in_executor(pool, stdin.read1, _CHUNK_BYTES)  # type: ignore[attr-defined]

    return FrameReader(read_chunk)


def socket_frames(reader: asyncio.StreamReader) -> FrameReader:
    """Frames of a TCP connection."""
    return FrameReader(lambda: reader.read(_CHUNK_BYTES))


def stdin_of(stdin: BinaryIO | None) -> BinaryIO:
    """The stream a stdio server reads: ``stdin`` when given, else the process's."""
    return stdin if stdin is not None else sys.stdin.buffer
