"""Fitting a next-edit prompt into the context: snippets go first (lowest score first), then the
oldest history edits; a region that alone does not fit is refused."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from inference.prompts.next_edit.inputs import NextEditInput, PastEdit
from inference.prompts.next_edit.sweep import SweepFormat
from inference.server.prepare_next_edit import fit_next_edit
from inference.server.prompt_budget import PromptBudget
from inference.server.validation import RequestError
from inference.tokenizer import Tokenizer
from tests.fixtures.tiny_models import write_tokenizer

SNIPPET = "def helper(values):\n    return sorted(values)\n"
EDIT = NextEditInput(
    path="a.py",
    region="total = compute(items)\n",
    cursor=0,
    history=(
        PastEdit("a.py", "", (("count = 1", "count = 2"),)),
        PastEdit("a.py", "", (("name = 'a'", "name = 'b'"),)),
    ),
    snippets=(("one.py", SNIPPET), ("two.py", SNIPPET), ("three.py", SNIPPET)),
)
SCORES = (0.5, 0.1, 0.9)


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Tokenizer:
    return Tokenizer.from_dir(write_tokenizer(Path(tmp_path_factory.mktemp("tok"))))


def _ids(tokenizer: Tokenizer, edit: NextEditInput) -> list[int]:
    return tokenizer.encode(SweepFormat().render(edit))


def _budget(prompt_tokens: int) -> PromptBudget:
    return PromptBudget(prompt_tokens + 1, 1)  # a reply of one token: the prompt may use the rest


def test_a_prompt_that_fits_is_kept_whole(tokenizer: Tokenizer) -> None:
    full = _ids(tokenizer, EDIT)
    fitted = fit_next_edit(tokenizer, SweepFormat(), _budget(len(full)), EDIT, SCORES)
    assert (fitted.token_ids, fitted.truncated_tokens, fitted.dropped_snippets) == (full, 0, 0)


def test_the_lowest_scored_snippet_goes_first(tokenizer: Tokenizer) -> None:
    full = _ids(tokenizer, EDIT)
    kept = _ids(tokenizer, replace(EDIT, snippets=(EDIT.snippets[0], EDIT.snippets[2])))
    fitted = fit_next_edit(tokenizer, SweepFormat(), _budget(len(full) - 1), EDIT, SCORES)
    assert fitted.token_ids == kept
    assert (fitted.truncated_tokens, fitted.dropped_snippets) == (len(full) - len(kept), 1)


def test_then_the_oldest_history_edits(tokenizer: Tokenizer) -> None:
    full = _ids(tokenizer, EDIT)
    no_snippets = _ids(tokenizer, replace(EDIT, snippets=()))
    newest_edit_only = _ids(tokenizer, replace(EDIT, snippets=(), history=EDIT.history[1:]))
    fitted = fit_next_edit(tokenizer, SweepFormat(), _budget(len(no_snippets) - 1), EDIT, SCORES)
    assert fitted.token_ids == newest_edit_only
    assert (fitted.truncated_tokens, fitted.dropped_snippets) == (len(full) - len(newest_edit_only), 3)


def test_a_region_that_alone_does_not_fit_is_refused(tokenizer: Tokenizer) -> None:
    bare = _ids(tokenizer, replace(EDIT, snippets=(), history=()))
    with pytest.raises(RequestError) as refused:
        fit_next_edit(tokenizer, SweepFormat(), _budget(len(bare) - 1), EDIT, SCORES)
    assert str(refused.value) == (
        f"the editable region does not fit: with its context lines and the sweep format's markup it is "
        f"{len(bare)} prompt tokens, but only {len(bare) - 1} fit (context {len(bare)} minus 1 kept for "
        "the reply); send a smaller region or less context"
    )
