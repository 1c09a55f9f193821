from __future__ import annotations

from lsp_server.completion.postprocess.pipeline import postprocess
from tests.lsp_server.postprocess.helpers import at_cursor


def test_pipeline_cleans_a_typical_suggestion() -> None:
    context = at_cursor("def area(w, h):\n    |\n\nprint(area(2, 3))\n")
    verdict = postprocess(context, "return w * h   \n\ndef other():\n    pass\n")
    assert verdict.text == "return w * h"
    assert verdict.dropped_by is None


def test_pipeline_names_the_filter_that_dropped_it() -> None:
    assert postprocess(at_cursor("x = |"), "   ").dropped_by == "drop_empty"
    verdict = postprocess(at_cursor("x = |"), "}")
    assert verdict.text is None
    assert verdict.dropped_by == "balance_brackets"
    assert postprocess(at_cursor("foo(|)"), ")").dropped_by == "drop_suffix_repeat"
