"""The truncation policy on the tiny model's real tokenizer: what is cut first, and that it fits."""

from __future__ import annotations

import pytest

from inference.prompts.chat import ChatTemplate
from inference.prompts.fim import fim_template_for
from inference.server.prompt_budget import (
    PromptBudget,
    fit_chat,
    fit_completion,
    fit_raw_prompt,
    keep_head,
    keep_tail,
)
from inference.server.validation import RequestError
from inference.tokenizer import Tokenizer
from tests.fixtures.tiny_models import write_tokenizer

LINES = [f"value_{i} = compute({i}, scale=2)\n" for i in range(200)]
FILE = "".join(LINES)


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Tokenizer:
    return Tokenizer.from_dir(write_tokenizer(tmp_path_factory.mktemp("tok")))


def test_a_prompt_that_fits_is_untouched(tokenizer: Tokenizer) -> None:
    fim = fim_template_for(tokenizer)
    snippets = [(("a.py", "def a(): pass"), 1.0)]
    fitted = fit_completion(tokenizer, fim, PromptBudget(512, 64), "x = ", "\n", snippets, "m.py", True)
    assert fitted.token_ids == tokenizer.encode(fim.build("x = ", "\n", [("a.py", "def a(): pass")], "m.py"))
    assert fitted.truncated_tokens == 0 and fitted.dropped_snippets == 0


def test_snippets_go_first_lowest_score_first(tokenizer: Tokenizer) -> None:
    fim = fim_template_for(tokenizer)
    body = "".join(LINES[:8])
    snippets = [(("strong.py", body), 3.0), (("weak.py", body), 1.0), (("middle.py", body), 2.0)]
    prefix, suffix = "def f():\n    return ", "\n"
    size = {
        kept: len(
            tokenizer.encode(fim.build(prefix, suffix, [s for s, _ in snippets if s[0] in kept], "m.py"))
        )
        for kept in [("strong.py", "weak.py", "middle.py"), ("strong.py", "middle.py"), ("strong.py",)]
    }
    budget = PromptBudget(size[("strong.py", "middle.py")] + 10, 10)
    fitted = fit_completion(tokenizer, fim, budget, prefix, suffix, snippets, "m.py", True)
    assert fitted.dropped_snippets == 1
    assert tokenizer.decode(fitted.token_ids) == fim.build(
        prefix, suffix, [("strong.py", body), ("middle.py", body)], "m.py"
    )
    assert fitted.truncated_tokens == size[("strong.py", "weak.py", "middle.py")] - len(fitted.token_ids)

    budget = PromptBudget(size[("strong.py",)] + 10, 10)
    fitted = fit_completion(tokenizer, fim, budget, prefix, suffix, snippets, "m.py", True)
    assert fitted.dropped_snippets == 2 and "strong.py" in tokenizer.decode(fitted.token_ids)


def test_the_file_is_cut_far_from_the_cursor_on_line_boundaries(tokenizer: Tokenizer) -> None:
    fim = fim_template_for(tokenizer)
    prefix, suffix = FILE + "result = ", "\n" + FILE
    budget = PromptBudget(512, 112)
    fitted = fit_completion(tokenizer, fim, budget, prefix, suffix, [], "m.py", True)
    assert len(fitted.token_ids) == 371  # of the 400 that fit: the cuts fall on whole lines
    text = tokenizer.decode(fitted.token_ids)
    kept_suffix = text.split("<|fim_suffix|>")[1].split("<|fim_prefix|>")[0]
    kept_prefix = text.split("<|fim_prefix|>")[1].split("<|fim_middle|>")[0]
    assert prefix.endswith(kept_prefix) and kept_prefix.endswith(
        "value_199 = compute(199, scale=2)\nresult = "
    )
    assert kept_prefix.startswith("value_") and kept_prefix in prefix  # starts at a whole line
    assert suffix.startswith(kept_suffix) and kept_suffix.endswith("\n")  # ends at a whole line
    assert kept_prefix == "".join(LINES[187:]) + "result = "
    assert kept_suffix == "\n" + "".join(LINES[:5])
    assert len(tokenizer.encode(kept_suffix)) == 86  # a quarter of the 400 at most, in whole lines
    full = len(tokenizer.encode(fim.build(prefix, suffix, [], "m.py")))
    assert fitted.truncated_tokens == full - len(fitted.token_ids)


def test_a_short_prefix_leaves_its_room_to_the_suffix(tokenizer: Tokenizer) -> None:
    fim = fim_template_for(tokenizer)
    fitted = fit_completion(tokenizer, fim, PromptBudget(512, 112), "x = ", "\n" + FILE, [], None, True)
    text = tokenizer.decode(fitted.token_ids)
    assert text.endswith("x = <|fim_middle|>")
    assert len(fitted.token_ids) == 386  # nearly all of the 400: the short prefix left its room


def test_reject_policy(tokenizer: Tokenizer) -> None:
    fim = fim_template_for(tokenizer)
    with pytest.raises(RequestError, match=r"the prompt is \d+ tokens but only 400 fit"):
        fit_completion(tokenizer, fim, PromptBudget(512, 112), FILE, "", [], None, False)


def test_the_reply_keeps_half_the_context_and_gets_what_the_prompt_leaves(tokenizer: Tokenizer) -> None:
    fim = fim_template_for(tokenizer)
    budget = PromptBudget(512, 512)
    assert (budget.reserved_tokens, budget.prompt_tokens) == (256, 256)
    fitted = fit_completion(tokenizer, fim, budget, FILE, "", [], None, True)
    assert (
        len(fitted.token_ids) == 255
    )  # cut near the cursor to the 256 the reply leaves, at a token boundary
    assert budget.reply_tokens(len(fitted.token_ids)) == 512 - len(fitted.token_ids)
    short = fit_completion(tokenizer, fim, budget, "x", "", [], None, False)
    assert budget.reply_tokens(len(short.token_ids)) == 512 - len(short.token_ids)
    assert PromptBudget(512, 100).reply_tokens(len(short.token_ids)) == 100


def test_raw_prompts_lose_their_start(tokenizer: Tokenizer) -> None:
    fitted = fit_raw_prompt(tokenizer, PromptBudget(256, 56), FILE, True)
    text = tokenizer.decode(fitted.token_ids)
    assert text == "".join(LINES[191:])  # whole lines, the last ones
    assert len(fitted.token_ids) == 189  # of the 200 that fit
    assert fitted.truncated_tokens == len(tokenizer.encode(FILE)) - len(fitted.token_ids)


def test_chat_drops_the_oldest_messages_but_keeps_system_and_last(tokenizer: Tokenizer) -> None:
    chat = ChatTemplate.from_tokenizer(tokenizer)
    old = "".join(LINES[:20])
    messages = [
        {"role": "system", "content": "You refactor code."},
        {"role": "user", "content": "first " + old},
        {"role": "assistant", "content": "reply " + old},
        {"role": "user", "content": "last question"},
    ]
    keep = [messages[0], messages[2], messages[3]]
    budget = PromptBudget(len(tokenizer.encode(chat.render(keep))) + 5, 5)
    fitted = fit_chat(tokenizer, chat, budget, messages, True)
    assert tokenizer.decode(fitted.token_ids) == chat.render(keep)

    budget = PromptBudget(len(tokenizer.encode(chat.render([messages[0], messages[3]]))) + 5, 5)
    fitted = fit_chat(tokenizer, chat, budget, messages, True)
    assert tokenizer.decode(fitted.token_ids) == chat.render([messages[0], messages[3]])

    long_last = [messages[0], {"role": "user", "content": FILE}]
    fitted = fit_chat(tokenizer, chat, PromptBudget(300, 100), long_last, True)
    text = tokenizer.decode(fitted.token_ids)
    assert text == chat.render([messages[0], {"role": "user", "content": "".join(LINES[192:])}])
    assert len(fitted.token_ids) == 197  # of the 200 that fit


def test_keep_head_and_tail_cut_whole_lines(tokenizer: Tokenizer) -> None:
    head = keep_head(tokenizer, FILE, 50)
    tail = keep_tail(tokenizer, FILE, 50)
    assert head == "".join(LINES[:2]) and len(tokenizer.encode(head)) == 34  # a third line passes 50
    assert tail == "".join(LINES[198:]) and len(tokenizer.encode(tail)) == 42
    assert keep_head(tokenizer, "short", 50) == "short" and keep_tail(tokenizer, FILE, 0) == ""
