"""`codedraft bench model [--model PATH]` (indexing on by default): the snippets the server would retrieve."""

from __future__ import annotations

from pathlib import Path

from bench.cursor_cases import CursorCase
from bench.cursor_retrieval import CorpusRetrieval

PATHS = '''import os


def list_dirs(top, names):
    """The names under top that are directories."""
    return [name for name in names if os.path.isdir(os.path.join(top, name))]
'''
WALK = """from paths import list_dirs


def walk(top, names):
    found = list_dirs(top, names)
    for name in found:
        print(name, "walked")
    return found
"""
HIDDEN = '        print(name, "walked")'


def _case() -> CursorCase:
    start = WALK.index(HIDDEN)
    cursor = start + len("        ")
    end = start + len(HIDDEN)
    return CursorCase(
        "walk.py", WALK[:cursor], WALK[cursor:end], WALK[end:], HIDDEN, "    for name in found:", "indent"
    )


def test_snippets_come_from_the_indexed_corpus_and_never_hold_the_hidden_line(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "paths.py").write_text(PATHS)
    (corpus / "walk.py").write_text(WALK)
    case = _case()
    with CorpusRetrieval(corpus) as retrieval:
        snippets = retrieval.snippets(case, 512)
        assert retrieval.snippets(case, 0) == []
        # The file on disk is indexed again once the case is done.
        assert retrieval.index.store.file_language("walk.py") is not None
    assert [(s.path, s.start_line, s.end_line) for s in snippets] == [("paths.py", 3, 5)]
    assert snippets[0].text.startswith("def list_dirs(top, names):\n")
    assert all('"walked"' not in s.text for s in snippets)
    assert not (corpus / ".codedraft").exists()  # the corpus itself is left as it was
