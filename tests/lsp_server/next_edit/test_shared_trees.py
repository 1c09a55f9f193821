"""The predictions after one edit (a rename, a rule, the calls of a changed signature) share the
document's syntax trees: the text before the edit is parsed once in full, the edited text
incrementally from it, however many of them look."""

from __future__ import annotations

import asyncio

import pytest

from lsp_server.completion import document_trees, syntax
from lsp_server.config import NextEditSettings
from lsp_server.next_edit import renames, repeated_edits
from lsp_server.next_edit.service import NOTHING
from tests.lsp_server.next_edit.test_service import Docs, _service, _type

SOURCE = "def area(width, height):\n    return width * height\n\n\nprint(area(2, 3))\n"


def test_one_edit_is_parsed_in_full_once_for_all_predictions(monkeypatch: pytest.MonkeyPatch) -> None:
    full: list[bytes] = []
    real = syntax.parse

    def counting(spec, text, old_tree=None):  # type: ignore[no-untyped-def]
        if old_tree is None:
            full.append(text if isinstance(text, bytes) else text.encode())
        return real(spec, text, old_tree)

    for module in (syntax, document_trees, renames, repeated_edits):
        if hasattr(module, "parse"):
            monkeypatch.setattr(module, "parse", counting)
    docs = Docs({"geo.py": SOURCE})
    service, _ = _service(docs, [], NextEditSettings(model=False))
    service.opened("geo.py", 1, SOURCE)
    _type(service, docs, "geo.py", 2, SOURCE.replace("width * height", "width * height * 2"))
    answer = asyncio.run(service.predict("geo.py", 1, 30))
    assert (answer.edits, answer.quiet) == ([], NOTHING)
    assert full == [SOURCE.encode()]  # the edited text and the later looks re-parse incrementally
