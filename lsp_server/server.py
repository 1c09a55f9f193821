"""The codedraft language server's shared state: settings, status, daemon, index, completions.

Features (``features/``) register handlers on it and import only this type; ``composition.py`` builds
the server with every feature. The server also is the :class:`~lsp_server.editor_host.EditorHost` and
:class:`~lsp_server.completion.at_position.CompletionHost` of the sessions below it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO
from urllib.parse import unquote

from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from inference import codedraft_version
from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.at_position import query_at
from lsp_server.completion.cold_prompts import PlannedPrompt
from lsp_server.completion.service import CompletionService
from lsp_server.config import DaemonSettings, Settings
from lsp_server.cursor_prefill import CursorPrefill
from lsp_server.daemon_supervisor import DaemonSupervisor
from lsp_server.message_intake import serve_frames, socket_frames, stdin_frames, stdin_of
from lsp_server.next_edit.service import NextEditService
from lsp_server.protocol import CodedraftProtocol
from lsp_server.reply_stream import EditorReplyStream, begin_reply_stream
from lsp_server.status import StatusReporter
from lsp_server.workspace_documents import WorkspaceDocuments

if TYPE_CHECKING:
    from indexer.retrieval.base import RetrievalQuery, Snippet
    from indexer.workspace import WorkspaceIndex
    from lsp_server.model_room import ModelRoom

log = logging.getLogger(__name__)


class CodedraftServer(LanguageServer):
    """A pygls server holding what the features share: settings, status, daemon, index, completions."""

    def __init__(self) -> None:
        super().__init__("codedraft", codedraft_version(), protocol_cls=CodedraftProtocol)
        self.settings = Settings()
        self.status = StatusReporter(self._notify, self.show_warning)
        self.pinned_daemon_address: str | None = None
        """The daemon address of ``codedraft lsp --daemon``: it wins over settings."""
        self.daemon = DaemonSupervisor(self._daemon_settings, self.status)
        self.completions = CompletionService(
            lambda: self.settings.completion,
            self.daemon.stream_complete,
            self.retrieve,
            lambda: self.daemon.room,
            self.daemon.cancel,
        )
        self.prefill = CursorPrefill(
            lambda: self.settings.completion, self._prefill_prompts, self._send_prefill
        )
        self.workspace_root: Path | None = None
        self.index: WorkspaceIndex | None = None
        self.documents = WorkspaceDocuments(self)
        self.next_edits = NextEditService(
            lambda: self.settings.next_edit,
            self.documents,
            lambda: self.index.store if self.index is not None else None,
            self.daemon.predict_edit,
            lambda query, tokens, time_ms, cancel: self.retrieve(
                query, tokens, time_ms, cancel, self.daemon.next_edit_room
            ),
            time.monotonic,
        )
        self.deleted: dict[str, bool] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serves the client on stdio until it exits or the stream ends (pygls's loop, with the
        stream read by ``message_frames``: bad frames and bad messages cost only themselves)."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        frames = stdin_frames(stdin_of(stdin), self.thread_pool)
        self._serve(lambda: serve_frames(frames, self.protocol, self._stop_event or threading.Event()))

    def start_tcp(self, host: str, port: int) -> None:
        """Serves one client on a TCP port (the editor connects; the server ends with that connection)."""
        stop = self._stop_event = threading.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.protocol.set_writer(writer)  # type: ignore[arg-type]
            await serve_frames(socket_frames(reader), self.protocol, stop)
            self.shutdown()

        async def listen() -> None:
            self._server = await asyncio.start_server(connection, host, port)
            log.info("serving LSP on %s:%s", host, port)
            async with self._server:
                await self._server.serve_forever()

        self._serve(listen)

    def _serve(self, main: Callable[[], Coroutine[Any, Any, None]]) -> None:
        try:
            asyncio.run(main())
        except BrokenPipeError:
            log.error("the connection to the editor is lost; shutting down")
        except (KeyboardInterrupt, SystemExit, asyncio.CancelledError):
            pass
        finally:
            self.shutdown()

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Runs ``coroutine`` in the background, keeping a reference until it is done."""
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def retrieve(
        self,
        query: RetrievalQuery,
        token_budget: int,
        time_budget_ms: float,
        cancel: threading.Event,
        room: ModelRoom | None = None,
    ) -> list[Snippet]:
        """Snippets from the workspace index (none while there is none), counted in the tokens of the
        model whose ``room`` is given (default: the completion model's)."""
        index = self.index
        if index is None:
            return []
        estimate = (room or self.daemon.room).estimate
        return index.retrieve(query, token_budget, time_budget_ms, cancel, estimate)

    async def _prefill_prompts(self, uri: str, position: types.Position) -> list[PlannedPrompt]:
        query = query_at(self, uri, position)
        if isinstance(query, str):
            return []
        return await self.completions.prefill_prompts(query)

    async def _send_prefill(self, prompt: PlannedPrompt, timeout_s: float) -> pb.PrefillResponse | None:
        reply = await self.daemon.prefill(prompt.request, timeout_s)
        if reply is not None:
            self.completions.prefilled(prompt.request.session_id, prompt, reply)
        return reply

    def open_document(self, uri: str) -> TextDocument | None:
        """The document the editor opened at ``uri``, or None if it never did."""
        return self.workspace.text_documents.get(unquote(uri))

    def open_documents(self) -> list[TextDocument]:
        """Every document open in the editor."""
        return list(self.workspace.text_documents.values())

    def relative_path(self, uri: str) -> str:
        """A document's path relative to the workspace (its absolute path when outside it)."""
        path = Path(self.workspace.get_text_document(uri).path)
        if self.workspace_root is not None:
            try:
                return path.resolve().relative_to(self.workspace_root).as_posix()
            except ValueError:
                pass
        return path.as_posix()

    def _daemon_settings(self) -> DaemonSettings:
        settings = self.settings.daemon
        if self.pinned_daemon_address is not None:
            return dataclasses.replace(settings, address=self.pinned_daemon_address)
        return settings

    def _notify(self, method: str, params: Any) -> None:
        self.protocol.notify(method, params)

    def show_warning(self, message: str) -> None:
        """A warning the user sees (a message window, not only the log)."""
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))

    async def reply_stream(self, token: str, title: str) -> EditorReplyStream:
        """Starts streaming a long reply to the editor (``reply_stream.py``)."""
        return await begin_reply_stream(self, token, title)

    def stream_generate(
        self, request: pb.GenerateRequest, timeout_s: float
    ) -> AsyncIterator[pb.GenerateChunk]:
        """The daemon's Generate stream for ``request``."""
        return self.daemon.stream_generate(request, timeout_s)

    @property
    def model_supports_tools(self) -> bool:
        """Whether the served model's chat template takes tool calls."""
        return self.daemon.supports_tools

    @property
    def served_model(self) -> pb.ModelDescription:
        """The served model's name and size (empty until the daemon has said)."""
        return self.daemon.model
