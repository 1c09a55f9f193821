"""Edits by example through the next-edit service: after the user changes one place, the same change
at the next place and the next, one accept each, with no model call; a dismissal stops the rule, an
undo withdraws it, a rule of one common token waits for a second example, and an edit still being
typed teaches nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

from indexer.workspace import WorkspaceIndex
from lsp_server.completion.syntax import MAX_PARSE_CHARS, language_spec
from lsp_server.config import NextEditSettings
from lsp_server.next_edit.diffs import FileEdit
from lsp_server.next_edit.repeated_edits import RepeatedEdits
from lsp_server.next_edit.rule_sites import MAX_SITES
from lsp_server.next_edit.service import NOTHING, REPEATED, NextEditService
from tests.lsp_server.next_edit.test_service import Docs, _service, _type

CLIENT = (
    "def get_all(client, url, timeout):\n"
    "    first = client.fetch(url)\n"
    "    second = client.fetch(url + '/next')\n"
    "    note = 'client.fetch(url)'  # client.fetch(url) in a comment\n"
    "    return first, second, client.fetch(url.lower())\n"
)
INDEX_ONLY = NextEditSettings(model=False)


def _typed(service: NextEditService, docs: Docs, path: str, old: str, new: str, version: int) -> str:
    """The user types ``old`` -> ``new`` at the first place of ``docs``' text."""
    text = docs.texts[path].replace(old, new, 1)
    _type(service, docs, path, version, text)
    return text


def _accept_all(service: NextEditService, docs: Docs, path: str, version: int) -> list[tuple[str, str]]:
    """Accepts each offered edit in turn as an editor does (apply, didChange, accept command)."""
    taken = []
    while (answer := asyncio.run(service.predict(path, 0, 0))).edits:
        edit = answer.edits[0]
        assert edit.source == "rule"
        taken.append((edit.old, edit.new))
        _type(service, docs, path, version, edit.applied_to(docs.texts[path]))
        service.accepted(edit.id)
        version += 1
    assert answer.quiet == REPEATED
    return taken


def test_an_argument_added_to_one_call_is_offered_at_each_other_call_then_quiet() -> None:
    docs = Docs({"a.py": CLIENT})
    service, asked = _service(docs, [])
    service.opened("a.py", 1, CLIENT)
    _typed(service, docs, "a.py", "client.fetch(url)\n", "client.fetch(url, timeout=timeout)\n", 2)
    taken = _accept_all(service, docs, "a.py", 3)
    assert taken == [
        ("client.fetch(url + '/next')", "client.fetch(url + '/next', timeout=timeout)"),
        ("client.fetch(url.lower())", "client.fetch(url.lower(), timeout=timeout)"),
    ]
    assert "'client.fetch(url)'  # client.fetch(url) in a comment" in docs.texts["a.py"]
    assert asked == []  # no model call, before or after


def test_a_dismissed_rule_is_not_offered_again() -> None:
    docs = Docs({"a.py": CLIENT})
    service, _ = _service(docs, [], INDEX_ONLY)
    service.opened("a.py", 1, CLIENT)
    _typed(service, docs, "a.py", "client.fetch(url)\n", "client.fetch(url, timeout=timeout)\n", 2)
    first = asyncio.run(service.predict("a.py", 1, 0)).edits[0]
    service.rejected(first.id)
    assert asyncio.run(service.predict("a.py", 1, 0)).quiet == REPEATED
    # The user makes the same change by hand at the next call: the rule stays stopped.
    second = "client.fetch(url + '/next')"
    _typed(service, docs, "a.py", second, second.replace("')", "', timeout=timeout)"), 9)
    answer = asyncio.run(service.predict("a.py", 2, 0))
    assert (answer.edits, answer.quiet) == ([], NOTHING)


def test_undoing_the_example_withdraws_its_repeats() -> None:
    docs = Docs({"a.py": CLIENT})
    service, _ = _service(docs, [], INDEX_ONLY)
    service.opened("a.py", 1, CLIENT)
    _typed(service, docs, "a.py", "client.fetch(url)\n", "client.fetch(url, timeout=timeout)\n", 2)
    assert len(asyncio.run(service.predict("a.py", 1, 0)).edits) == 2
    _type(service, docs, "a.py", 3, CLIENT)  # the editor's undo
    answer = asyncio.run(service.predict("a.py", 1, 0))
    assert (answer.edits, answer.quiet) == ([], NOTHING)


def test_one_common_token_changed_waits_for_a_second_example() -> None:
    source = "def f(x):\n    a = 0\n    b = 0\n    c = 0\n    return a, b, c\n"
    docs = Docs({"a.py": source})
    service, _ = _service(docs, [], INDEX_ONLY)
    service.opened("a.py", 1, source)
    _typed(service, docs, "a.py", "a = 0", "a = 1", 2)
    assert asyncio.run(service.predict("a.py", 1, 0)).edits == []
    service.clock.now = 10.0  # type: ignore[attr-defined]  # a separate edit, not the same burst
    _typed(service, docs, "a.py", "b = 0", "b = 1", 3)
    (edit,) = asyncio.run(service.predict("a.py", 2, 0)).edits
    assert (edit.old, edit.new) == ("c = 0", "c = 1")


def test_a_half_typed_name_teaches_nothing() -> None:
    docs = Docs({"a.py": CLIENT})
    service, _ = _service(docs, [], INDEX_ONLY)
    service.opened("a.py", 1, CLIENT)
    _typed(service, docs, "a.py", "client.fetch(url)\n", "client.fetch(url, timeo)\n", 2)
    answer = asyncio.run(service.predict("a.py", 1, 0))
    assert (answer.edits, answer.quiet) == ([], NOTHING)


def test_the_repeats_reach_a_file_that_imports_the_function(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    api = "def fetch(url, timeout=5):\n    return url\n\n\nfetch('a')\nfetch('b')\n"
    user = "from api import fetch\n\nprint(fetch('c'))\n"
    (root / "api.py").write_text(api)
    (root / "main.py").write_text(user)
    with WorkspaceIndex(root, db_path=tmp_path / "index.sqlite") as index:
        index.refresh()
        docs = Docs({"api.py": api})
        disk = {"main.py": user}
        docs.text = lambda path: docs.texts.get(path, disk.get(path))  # type: ignore[method-assign]
        service, _ = _service(docs, [], INDEX_ONLY)
        service.store = lambda: index.store
        service.opened("api.py", 1, api)
        _typed(service, docs, "api.py", "fetch('a')", "fetch('a', timeout=1)", 2)
        answer = asyncio.run(service.predict("api.py", 4, 0))
    assert [(e.path, e.old, e.new) for e in answer.edits] == [
        ("api.py", "fetch('b')", "fetch('b', timeout=1)"),
        ("main.py", "fetch('c')", "fetch('c', timeout=1)"),
    ]


def test_bad_input_is_bounded_work_and_quiet_rather_than_slow() -> None:
    spec = language_spec("python")
    assert spec is not None
    many = "".join(f"fetch(item_{n})\n" for n in range(5_000))  # a rule matching thousands of places
    edited = many.replace("fetch(item_2500)", "fetch(item_2500, retries=3)")
    edits = RepeatedEdits().propose(spec, FileEdit("m.py", many, edited, 0.0))
    assert len(edits) == MAX_SITES  # the nearest ones only
    assert {e[3] for e in edits[:2]} == {"fetch(item_2499)", "fetch(item_2501)"}
    huge = "x = 1\n" * (MAX_PARSE_CHARS // 6 + 1) + many
    assert (
        RepeatedEdits().propose(
            spec, FileEdit("h.py", huge, huge.replace("fetch(item_7)", "fetch(item_7, 1)"), 0.0)
        )
        == []
    )
    broken = "def f(:\n" + many  # a file that does not parse where the edit is
    assert (
        RepeatedEdits().propose(spec, FileEdit("b.py", broken, broken.replace("def f(:", "def g(:"), 0.0))
        == []
    )
    # ... but an edit in a part that parses still finds the places that parse.
    found = RepeatedEdits().propose(
        spec, FileEdit("b.py", broken, broken.replace("fetch(item_1)\n", "fetch(item_1, 2)\n"), 0.0)
    )
    assert found[0][3:] == ("fetch(item_0)", "fetch(item_0, 2)")
