"""What the refactor and fix sessions need of the language server, as a narrow interface.

The sessions (``rewrite/session.py``, ``agent/lsp_fix.py``) take an :class:`EditorHost` instead of the
whole server, so they sit below the server and its features, and tests can drive them with a small
object of their own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol

from pygls.workspace import TextDocument

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.reply_stream import ReplyStream


class EditorHost(Protocol):
    """The editor's documents and workspace, the daemon's Generate, and the user's channels."""

    @property
    def workspace_root(self) -> Path | None:
        """The workspace folder; None without one."""

    def open_document(self, uri: str) -> TextDocument | None:
        """The document the editor opened at ``uri``, or None if it never did."""

    def open_documents(self) -> list[TextDocument]:
        """Every document open in the editor."""

    def relative_path(self, uri: str) -> str:
        """A document's path relative to the workspace (its absolute path when outside it)."""

    def show_warning(self, message: str) -> None:
        """Tells the user something they must act on (a message, not only a log line)."""

    async def reply_stream(self, token: str, title: str) -> ReplyStream:
        """Starts streaming a long reply named ``token`` to the editor (see ``reply_stream.py``)."""

    def stream_generate(
        self, request: pb.GenerateRequest, timeout_s: float
    ) -> AsyncIterator[pb.GenerateChunk]:
        """The daemon's Generate stream for ``request``."""

    @property
    def model_supports_tools(self) -> bool:
        """Whether the served model's chat template takes tool calls."""

    @property
    def served_model(self) -> pb.ModelDescription:
        """The served model's name and size (empty until the daemon has said)."""
