"""``codedraft/cursor``: where the cursor rests, for the prefill of the prompt there
(:mod:`lsp_server.cursor_prefill`).

The VS Code extension sends ``{"textDocument": {"uri": …}, "position": {"line": …, "character": …}}``
(LSP positions: 0-based line, UTF-16 column) when the selection changes, debounced; other clients may
send the same. ``didOpen`` and ``codeAction`` requests also tell where the cursor is (see
``documents.py`` and ``code_actions.py``).
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types

from lsp_server.server import CodedraftServer

log = logging.getLogger(__name__)

CURSOR_NOTIFICATION = "codedraft/cursor"


def setup(server: CodedraftServer) -> None:
    @server.feature(CURSOR_NOTIFICATION)
    def cursor(ls: CodedraftServer, params: Any) -> None:
        place = cursor_from(params)
        if place is None:
            log.debug("ignored a malformed %s notification: %r", CURSOR_NOTIFICATION, params)
            return
        uri, position = place
        if ls.open_document(uri) is not None:
            ls.prefill.moved(uri, position)


def cursor_from(params: Any) -> tuple[str, types.Position] | None:
    """The document and position of a ``codedraft/cursor`` notification (as pygls hands over the
    params of a custom method, or as a dict), or None when they are malformed."""
    try:
        document, position = _field(params, "textDocument"), _field(params, "position")
        uri = _field(document, "uri")
        line, character = _field(position, "line"), _field(position, "character")
    except (AttributeError, KeyError, TypeError):
        return None
    if not isinstance(uri, str) or not all(isinstance(v, int) and v >= 0 for v in (line, character)):
        return None
    return uri, types.Position(line=line, character=character)


def _field(value: Any, name: str) -> Any:
    return value[name] if isinstance(value, dict) else getattr(value, name)
