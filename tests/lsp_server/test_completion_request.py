"""The request the language server sends for a cursor (also what `bench model --model` sends)."""

from __future__ import annotations

from indexer.retrieval.base import Snippet
from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.budgets import PromptBudgets
from lsp_server.completion.request import complete_request
from lsp_server.config import CompletionSettings
from tests.lsp_server.test_window import make_document


def test_the_request_carries_the_window_snippets_and_settings() -> None:
    text = make_document(1000) + "\nbad = '\ud800'"
    offset = text.index("line_0500")
    snippet = Snippet("lib.py", 3, 4, "def f():\n    pass\n", ("bm25", "defs"), 0.5)
    settings = CompletionSettings(max_tokens=40, speculation="ngram")
    request = complete_request(
        session_id="file:///a.py",
        text=text,
        offset=offset,
        path="a.py",
        language="python",
        snippets=[snippet],
        settings=settings,
        budgets=PromptBudgets(prefix=200, suffix=100000, context=64),
    )
    assert text[:offset].endswith(request.prefix) and request.prefix.endswith("line_0499 = 499\n")
    # 200 tokens at 3.5 characters hold 43 whole lines of 16 characters; the window's start is then
    # rounded to a 16-line step: lines 464 to 499
    assert request.prefix.startswith("line_0464 = 464\n") and len(request.prefix) == 36 * 16
    assert request.suffix == text[offset:].replace("\ud800", "?")  # valid UTF-8 on the wire
    assert (request.session_id, request.path, request.language) == ("file:///a.py", "a.py", "python")
    sent = request.snippets[0]
    assert (sent.path, sent.text, sent.source, sent.start_line) == ("lib.py", snippet.text, "bm25+defs", 4)
    assert request.sampling.max_tokens == 40 and request.sampling.temperature == 0.0
    assert request.speculation == pb.SPECULATION_MODE_NGRAM
