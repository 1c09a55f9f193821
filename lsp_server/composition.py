"""The composition root: builds the language server with every feature registered.

It sits above the features, which import only the server's state type (``server.py``) and never
each other; nothing imports this module but the command line.
"""

from __future__ import annotations

from lsp_server.features import (
    code_actions,
    commands,
    completion_feedback,
    completion_items,
    cursor,
    documents,
    inline_completion,
    inspection,
    lifecycle,
    next_edit,
    watched_files,
)
from lsp_server.server import CodedraftServer


def create_server() -> CodedraftServer:
    """A server with every feature registered."""
    server = CodedraftServer()
    for feature in (
        lifecycle,
        documents,
        cursor,
        inline_completion,
        completion_items,
        completion_feedback,
        code_actions,
        commands,
        inspection,
        next_edit,
        watched_files,
    ):
        feature.setup(server)
    return server
