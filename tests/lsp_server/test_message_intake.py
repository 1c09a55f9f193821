"""decode: a frame's message structured by pygls, lone surrogates replaced one for one, and JSON-RPC's
error for each message that is none."""

from __future__ import annotations

import pytest
from lsprotocol import types

from lsp_server.composition import create_server
from lsp_server.message_frames import Frame
from lsp_server.message_intake import BadMessage, decode

PROTOCOL = create_server().protocol


def _did_open(text_json: str) -> bytes:
    """A didOpen whose text is ``text_json`` as written in JSON (escapes included)."""
    item = '{"uri": "file:///a.py", "languageId": "python", "version": 1, "text": "' + text_json + '"}'
    return (
        '{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": ' + item + "}}"
    ).encode()


def test_lone_surrogates_become_replacement_characters_and_pairs_stay() -> None:
    message = decode(Frame(_did_open("a\\ud800b\\udfffc \\ud83d\\ude00")), PROTOCOL)
    assert isinstance(message, types.DidOpenTextDocumentNotification)
    assert message.params.text_document.text == "a\ufffdb\ufffdc \U0001f600"


@pytest.mark.parametrize(
    ("body", "code", "msg_id", "message"),
    [
        (b"[]", -32600, None, "a message must be one JSON object, not a batch"),
        (b'{"jsonrpc": "2.0", "id": 3, "method": 4}', -32600, 3, '"method" must be a string, got 4'),
        (
            b'{"jsonrpc": "2.0", "id": "x", "method": "textDocument/hover", "params": {}}',
            -32602,
            "x",
            "bad params for textDocument/hover: required field missing @ params.textDocument; "
            "required field missing @ params.position",
        ),
    ],
)
def test_messages_that_are_none_name_their_problem(
    body: bytes, code: int, msg_id: object, message: str
) -> None:
    with pytest.raises(BadMessage) as refused:
        decode(Frame(body), PROTOCOL)
    assert (refused.value.code, refused.value.msg_id, str(refused.value)) == (code, msg_id, message)
