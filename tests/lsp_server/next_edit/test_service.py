"""The next-edit service end to end below the wire: typing a rename offers the other occurrences one
after another (accepting each as the editor would), a model rewrite becomes edits that pass the
checks, and a quiet answer says why."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from pathlib import Path

from indexer.retrieval.base import RetrievalQuery, Snippet
from indexer.workspace import WorkspaceIndex
from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.config import NextEditSettings
from lsp_server.next_edit.checks import REVERTS
from lsp_server.next_edit.service import NOTHING, OFF, RENAMED, STALE, TOO_LONG, NextEditService

SOURCE = "def area(width, height):\n    size = width * height\n    return size + width\n"


class Docs:
    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts

    def text(self, path: str) -> str | None:
        return self.texts.get(path)

    def language(self, path: str) -> str | None:
        return "python"

    def open_texts(self) -> Mapping[str, str]:
        return dict(self.texts)


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def _no_snippets(query: RetrievalQuery, budget: int, ms: float, cancel: threading.Event) -> list[Snippet]:
    return []


def _service(
    docs: Docs, replies: list[pb.PredictEditReply], settings: NextEditSettings | None = None
) -> tuple[NextEditService, list[pb.PredictEditRequest]]:
    asked: list[pb.PredictEditRequest] = []

    async def predict(request: pb.PredictEditRequest, timeout_s: float) -> pb.PredictEditReply:
        asked.append(request)
        return replies.pop(0)

    service = NextEditService(
        lambda: settings or NextEditSettings(), docs, lambda: None, predict, _no_snippets, Clock()
    )
    return service, asked


def _type(service: NextEditService, docs: Docs, path: str, version: int, text: str) -> None:
    docs.texts[path] = text
    service.changed(path, version, text)


def test_a_typed_rename_offers_each_other_use_until_all_are_renamed() -> None:
    docs = Docs({"geo.py": SOURCE})
    service, asked = _service(docs, [])
    service.opened("geo.py", 1, SOURCE)
    text = SOURCE
    for version, typed in enumerate(
        ("w", "wi", "wid", "wide"), start=2
    ):  # "width" -> "wide" at the definition
        text = SOURCE.replace("width,", f"{typed},", 1)
        _type(service, docs, "geo.py", version, text)
    version = 6
    while (answer := asyncio.run(service.predict("geo.py", 0, 13))).edits:
        edit = answer.edits[0]
        assert (edit.old, edit.new, edit.source) == ("width", "wide", "rename")
        text = edit.applied_to(text)  # the editor applies it, then runs the accept command
        _type(service, docs, "geo.py", version, text)
        service.accepted(edit.id)
        version += 1
    assert text == SOURCE.replace("width", "wide")
    assert asked == []  # renames need no model call, and once offered the model is not asked
    assert asyncio.run(service.predict("geo.py", 2, 4)).quiet == RENAMED
    assert [e.accepted for e in service.history.edits()] == [False, True, True]


def test_the_models_rewrite_of_the_region_becomes_edits() -> None:
    docs = Docs({"geo.py": SOURCE})
    typed = SOURCE.replace("size = width * height", "size = width * height  # cm2")
    rewritten = typed.replace("return size + width", "return size")
    service, asked = _service(docs, [pb.PredictEditReply(parsed=True, rewritten_region=rewritten)])
    service.opened("geo.py", 1, SOURCE)
    _type(service, docs, "geo.py", 2, typed)
    answer = asyncio.run(service.predict("geo.py", 2, 4))
    (request,) = asked
    assert request.region == typed and request.cursor == typed.index("return")
    assert request.original_region == SOURCE and request.starts_file is True
    assert [h.path for h in request.history] == ["geo.py"]
    assert request.history[0].diff.startswith("--- a/geo.py\n+++ b/geo.py\n")
    (edit,) = answer.edits
    assert (edit.old, edit.new, edit.source) == (" + width", "", "model")
    assert edit.applied_to(typed) == rewritten


def test_a_rewrite_that_undoes_the_users_edit_stays_quiet() -> None:
    docs = Docs({"geo.py": SOURCE})
    service, _ = _service(docs, [pb.PredictEditReply(parsed=True, rewritten_region=SOURCE)])
    service.opened("geo.py", 1, SOURCE)
    _type(service, docs, "geo.py", 2, SOURCE.replace("return size + width", "return size"))
    answer = asyncio.run(service.predict("geo.py", 2, 4))
    assert (answer.edits, answer.quiet) == ([], REVERTS)


def test_a_document_that_changed_while_the_model_predicted_gets_nothing() -> None:
    docs = Docs({"geo.py": SOURCE})
    service, _ = _service(docs, [])

    async def predict(request: pb.PredictEditRequest, timeout_s: float) -> pb.PredictEditReply:
        docs.texts["geo.py"] = SOURCE + "\n"  # the user typed meanwhile
        return pb.PredictEditReply(parsed=True, rewritten_region=request.region.replace("size +", "size -"))

    service.predict_edit = predict
    service.opened("geo.py", 1, SOURCE)
    answer = asyncio.run(service.predict("geo.py", 2, 4))
    assert (answer.edits, answer.quiet) == ([], STALE)


def test_off_and_index_only_settings() -> None:
    docs = Docs({"geo.py": SOURCE})
    service, asked = _service(docs, [], NextEditSettings(enabled=False))
    assert asyncio.run(service.predict("geo.py", 0, 0)).quiet == OFF
    service, asked = _service(docs, [], NextEditSettings(model=False))
    assert asyncio.run(service.predict("geo.py", 0, 0)).quiet == NOTHING
    assert asked == []


def test_a_module_level_rename_reaches_an_importing_file_through_the_index(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    geo = "def area(r):\n    return 3 * r * r\n"
    user = "from geo import area\n\nprint(area(2))\n"
    (root / "geo.py").write_text(geo)
    (root / "main.py").write_text(user)
    with WorkspaceIndex(root, db_path=tmp_path / "index.sqlite") as index:
        index.refresh()
        docs = Docs({"geo.py": geo})
        disk = {"main.py": user}
        docs.text = lambda path: docs.texts.get(path, disk.get(path))  # type: ignore[method-assign]
        service, _ = _service(docs, [])
        service.store = lambda: index.store
        service.opened("geo.py", 1, geo)
        _type(service, docs, "geo.py", 2, geo.replace("area", "surface"))
        answer = asyncio.run(service.predict("geo.py", 0, 4))
    assert [(e.path, user[e.start : e.end], e.new) for e in answer.edits] == [
        ("main.py", "area", "surface"),
        ("main.py", "area", "surface"),
    ]


def test_a_changed_signature_asks_the_model_at_its_call_site_first() -> None:
    lines = ["def area(width, height):", "    return width * height", ""] + [f"# note {n}" for n in range(30)]
    source = "\n".join([*lines, "print(area(2, 3))", ""])
    typed = source.replace("height):", "height, depth):", 1)
    docs = Docs({"geo.py": source})
    service, asked = _service(docs, [])

    async def predict(request: pb.PredictEditRequest, timeout_s: float) -> pb.PredictEditReply:
        asked.append(request)
        return pb.PredictEditReply(parsed=True, rewritten_region=request.region.replace("3))", "3, 1))"))

    service.predict_edit = predict
    service.opened("geo.py", 1, source)
    _type(service, docs, "geo.py", 2, typed)
    (edit,) = asyncio.run(service.predict("geo.py", 0, 29)).edits
    assert "print(area(2, 3))" in asked[0].region and "def area" not in asked[0].region
    assert asked[0].region[asked[0].cursor :].startswith("area(2, 3))")
    assert (typed[edit.start : edit.end], edit.new) == ("", ", 1")
    assert edit.applied_to(typed).endswith("print(area(2, 3, 1))\n")


def test_huge_documents_are_bounded_like_completions() -> None:
    one_line = "x = '" + "a" * 5_000_000 + "'\n"
    many_lines = "".join(f"value_{n} = {n}\n" for n in range(200_000))  # about 3.5 MB
    docs = Docs({"one.py": one_line, "many.py": many_lines})
    service, asked = _service(docs, [pb.PredictEditReply(parsed=True, rewritten_region="")])
    service.opened("one.py", 1, one_line)
    answer = asyncio.run(service.predict("one.py", 0, 3))
    assert (answer.edits, answer.quiet, asked) == ([], TOO_LONG, [])
    service.opened("many.py", 1, many_lines)
    _type(service, docs, "many.py", 2, many_lines.replace("value_7 = 7", "value_7 = 70"))
    assert service.history.edits() == []  # too long to diff on every keystroke: no history kept
    asyncio.run(service.predict("many.py", 100_000, 0))
    (request,) = asked
    assert request.region.count("\n") == 15 and len(request.region.encode()) <= 4096


def test_a_documents_snippets_stay_the_same_while_it_is_open() -> None:
    text = "".join(f"v{n} = {n}\n" for n in range(300))
    docs = Docs({"a.py": text})
    found: list[int] = []

    def retrieve(query: RetrievalQuery, budget: int, ms: float, cancel: threading.Event) -> list[Snippet]:
        found.append(query.line)
        if query.line == 2:  # the index is not ready yet: nothing found, asked again next time
            return []
        return [Snippet("b.py", 0, 0, f"near {query.line}\n", ("bm25",), 1.0)]

    service, asked = _service(docs, [pb.PredictEditReply(parsed=False)] * 5)
    service.retrieve = retrieve
    for line in (2, 5, 40, 250):
        asyncio.run(service.predict("a.py", line, 0))
    assert found == [2, 5]
    assert [[s.text for s in r.snippets] for r in asked] == [[], ["near 5\n"], ["near 5\n"], ["near 5\n"]]
    service.closed("a.py")  # reopened, it gets snippets for its new first cursor
    service.opened("a.py", 1, text)
    asyncio.run(service.predict("a.py", 200, 0))
    assert found == [2, 5, 200] and asked[-1].snippets[0].text == "near 200\n"
