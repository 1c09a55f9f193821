"""A rewrite session over a small EditorHost of the test's own: the reply streams to the editor, the
proposal is checked off the event loop's thread, and the edit covers the selected lines."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.workspace import TextDocument

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.editor_host import EditorHost
from lsp_server.rewrite import session
from lsp_server.rewrite.proposal_check import Proposal

SOURCE = "def area(w, h):\n    return w * h\n"


class _Stream:
    def __init__(self) -> None:
        self.deltas: list[str] = []
        self.progress: list[str] = []
        self.ended = 0

    def text(self, delta: str, progress: str | None = None) -> None:
        self.deltas.append(delta)
        if progress is not None:
            self.progress.append(progress)

    def end(self) -> None:
        self.ended += 1


class _Host:
    def __init__(self, root: Path, reply: list[str]) -> None:
        self.workspace_root: Path | None = root
        self.uri = (root / "geometry.py").as_uri()
        self.document = TextDocument(self.uri, SOURCE, version=3, language_id="python")
        self.reply = reply
        self.stream = _Stream()
        self.requests: list[pb.GenerateRequest] = []

    def open_document(self, uri: str) -> TextDocument | None:
        return self.document if uri == self.uri else None

    def open_documents(self) -> list[TextDocument]:
        return [self.document]

    def relative_path(self, uri: str) -> str:
        return "geometry.py"

    def show_warning(self, message: str) -> None:
        raise AssertionError(message)

    async def reply_stream(self, token: str, title: str) -> _Stream:
        return self.stream

    async def _chunks(self, request: pb.GenerateRequest) -> AsyncIterator[pb.GenerateChunk]:
        self.requests.append(request)
        for piece in self.reply:
            yield pb.GenerateChunk(text_delta=piece)
        yield pb.GenerateChunk(done=True)

    def stream_generate(
        self, request: pb.GenerateRequest, timeout_s: float
    ) -> AsyncIterator[pb.GenerateChunk]:
        return self._chunks(request)

    @property
    def model_supports_tools(self) -> bool:
        return False

    @property
    def served_model(self) -> pb.ModelDescription:
        return pb.ModelDescription()


async def test_the_rewrite_streams_and_checks_its_proposal_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked_on: list[threading.Thread] = []
    real_check = session.proposal_problem

    def recording(proposal: Proposal) -> str | None:
        checked_on.append(threading.current_thread())
        return real_check(proposal)

    monkeypatch.setattr(session, "proposal_problem", recording)
    host = _Host(tmp_path, ["```python\ndef area(width, height):\n", "    return width * height\n```\n"])
    typed: EditorHost = host  # the narrow interface is all the session needs
    span = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=2, character=0))
    result = await session.run_rewrite(typed, host.uri, span, "rename the parameters", [], "Refactor")
    assert result.error is None
    assert checked_on and checked_on[0] is not threading.current_thread()  # a worker thread, not the loop's
    assert host.stream.deltas == ["```python\ndef area(width, height):\n", "    return width * height\n```\n"]
    assert host.stream.progress == ["35 characters", "65 characters"]
    assert host.stream.ended == 1
    assert host.requests[0].session_id == f"{host.uri}#rewrite"
    assert result.edit is not None and result.edit.document_changes is not None
    change = result.edit.document_changes[0]
    assert isinstance(change, types.TextDocumentEdit) and change.text_document.version == 3
    (edit,) = change.edits
    assert edit.new_text == "def area(width, height):\n    return width * height"
    assert (edit.range.start.line, edit.range.end.line) == (0, 1)
