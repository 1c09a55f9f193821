"""A served model the fix bench measured fixing nothing: "Fix with codedraft" says so once, and runs
no attempt."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.workspace import TextDocument

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.agent import lsp_fix, model_fit
from lsp_server.config import AgentSettings

SOURCE = "def double(x):\n    x * 2\n"


class _Host:
    def __init__(self, root: Path, model: pb.ModelDescription) -> None:
        self.workspace_root: Path | None = root
        self.uri = (root / "double.py").as_uri()
        self.document = TextDocument(self.uri, SOURCE, version=1, language_id="python")
        self.served_model = model
        self.model_supports_tools = False
        self.warnings: list[str] = []

    def open_document(self, uri: str) -> TextDocument | None:
        return self.document if uri == self.uri else None

    def open_documents(self) -> list[TextDocument]:
        return [self.document]

    def show_warning(self, message: str) -> None:
        self.warnings.append(message)

    async def reply_stream(self, token: str, title: str) -> object:
        raise AssertionError("no attempt may start")


async def test_a_model_that_fixed_nothing_is_not_asked_and_the_user_hears_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = tmp_path / "results.json"
    model_fit.record(
        "tiny-model", 3_900_000, {"fixed": 0, "cases": 10, "steps_limit": 4, "measured": "x"}, results
    )
    monkeypatch.setattr(model_fit, "RESULTS_PATH", results)
    monkeypatch.setattr(lsp_fix, "_TOLD", set())
    (tmp_path / "double.py").write_text(SOURCE)
    host = _Host(tmp_path, pb.ModelDescription(name="tiny-model", parameters=3_900_000))
    settings = AgentSettings(check_command="python3 -m unittest -q")
    span = types.Range(start=types.Position(line=1, character=0), end=types.Position(line=1, character=0))
    first = await lsp_fix.run_agent_fix(host, settings, host.uri, span, [], "Fix with codedraft")  # type: ignore[arg-type]
    second = await lsp_fix.run_agent_fix(host, settings, host.uri, span, [], "Fix with codedraft")  # type: ignore[arg-type]
    expected = model_fit.cannot_fix("tiny-model", 3_900_000)
    assert expected is not None and expected.startswith("the served model, tiny-model, fixed none of the 10")
    assert first.error == second.error == expected
    assert first.result is None and second.result is None
    assert host.warnings == [expected]
