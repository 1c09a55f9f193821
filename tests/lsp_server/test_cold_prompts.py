"""Local prompts where the full one is cold: sized from the daemon's measured prompt speed, replaced by
the full prompt once a prefill or a suggestion has computed it, and never used where the full prompt
is cheap or the setting is 0."""

from __future__ import annotations

import dataclasses
import threading

from indexer.retrieval.base import RetrievalQuery, Snippet
from indexer.token_estimate import TokenEstimate
from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.budgets import PromptBudgets
from lsp_server.completion.cold_prompts import (
    MIN_LOCAL_TOKENS,
    UNMEASURED_TOKENS,
    ColdPrompts,
    Layout,
    PlannedPrompt,
    estimated_tokens,
)
from lsp_server.completion.service import CompletionService
from lsp_server.config import CompletionSettings
from tests.lsp_server.test_completion_service import ScriptedDaemon, query

BUDGETS = PromptBudgets(prefix=1536, suffix=512, context=1024)
ESTIMATE = TokenEstimate()
CHARS_PER_TOKEN = ESTIMATE.chars_per_token
SETTINGS = CompletionSettings(debounce_ms=1, max_debounce_ms=2)
SNIPPET = Snippet("lib.py", 9, 11, "def helper():\n    return 1\n", ("definitions",), 0.5)
# ~3,400 tokens of code before the cursor: far more than the daemon computes in coldPromptMs.
LONG = "".join(f"def function_{n}(value):\n    return value * {n} + {n * 7}\n\n" for n in range(300))


def _full(prefix_chars: int, snippet: str = "x = 1\n") -> pb.CompleteRequest:
    return pb.CompleteRequest(
        path="a.py",
        prefix="y" * prefix_chars,
        suffix="",
        snippets=[pb.ContextSnippet(path="lib.py", text=snippet, start_line=3)],
    )


def test_an_unmeasured_daemon_gets_local_prompts_of_the_default_size_split_like_the_budgets() -> None:
    cold = ColdPrompts()
    plan = cold.plan("a", _full(20_000), BUDGETS, 500)
    assert UNMEASURED_TOKENS == 256
    assert plan == PromptBudgets(prefix=192, suffix=64, context=0, line_step=3)
    small = _full(int((UNMEASURED_TOKENS - 10) * CHARS_PER_TOKEN))
    assert estimated_tokens(small, ESTIMATE) == 250
    assert cold.plan("a", small, BUDGETS, 500) == PlannedPrompt.full(small)  # cheap enough: full


def test_the_local_size_follows_the_measured_speed_and_zero_turns_it_off() -> None:
    cold = ColdPrompts()
    # 2 tokens a millisecond, as the budgets count tokens: the tokenizer made 1,000 of the 2,000 estimated
    answered = _full(int(2000 * CHARS_PER_TOKEN) - 12)  # 12 characters of snippet and its path
    assert estimated_tokens(answered, ESTIMATE) == 2000
    cold.speed.observe(
        answered, pb.RequestFigures(prompt_tokens=1000, computed_tokens=1000), 1000.0, ESTIMATE
    )
    cold.speed.observe(
        answered, pb.RequestFigures(prompt_tokens=1000, computed_tokens=10), 1.0, ESTIMATE
    )  # too few
    assert cold.speed.tokens_in(400) == 768  # 800, rounded down to a half octave
    plan = cold.plan("a", _full(20_000), BUDGETS, 400)
    assert plan == PromptBudgets(prefix=576, suffix=192, context=0, line_step=9)
    full = _full(int(700 * CHARS_PER_TOKEN))
    assert cold.plan("a", full, BUDGETS, 400) == PlannedPrompt.full(full)  # 700 tokens fit
    assert cold.plan("a", _full(20_000), BUDGETS, 0) == PlannedPrompt.full(_full(20_000))
    # a slower machine now: 50 of 500 tokens computed (the rest reused): 100 estimated tokens in 1 s
    cold.speed.observe(answered, pb.RequestFigures(prompt_tokens=500, computed_tokens=50), 1000.0, ESTIMATE)
    assert cold.speed.tokens_in(400) == 384  # 1.05 tokens a millisecond: 420
    assert cold.speed.tokens_in(1) == MIN_LOCAL_TOKENS


def test_a_document_keeps_its_local_size_until_the_speed_changes_twofold() -> None:
    cold = ColdPrompts()
    big = _full(20_000)
    answered = _full(int(1000 * CHARS_PER_TOKEN) - 12)
    cold.speed.observe(answered, pb.RequestFigures(prompt_tokens=500, computed_tokens=500), 1000.0, ESTIMATE)
    first = cold.plan("a", big, BUDGETS, 500)  # 500 tokens: 384
    assert isinstance(first, PromptBudgets) and first.prefix == 288
    cold.speed.observe(answered, pb.RequestFigures(prompt_tokens=500, computed_tokens=500), 600.0, ESTIMATE)
    assert cold.speed.tokens_in(500) == 512  # a new bucket, but within a factor of two
    assert cold.plan("a", big, BUDGETS, 500) == first
    assert cold.plan("b", big, BUDGETS, 500) != first  # a new document takes the new size
    for _ in range(4):
        cold.speed.observe(
            answered, pb.RequestFigures(prompt_tokens=500, computed_tokens=500), 100.0, ESTIMATE
        )
    # about 9.5 tokens a millisecond now: 4,096 in 500 ms, more than the budgets ask for
    assert cold.speed.tokens_in(500) == 4096
    assert cold.plan("a", big, BUDGETS, 500) == PromptBudgets(
        prefix=1536, suffix=512, context=0, line_step=16
    )
    cold.forget("a")


def test_a_full_prompt_once_computed_is_sent_while_it_starts_the_same_way() -> None:
    cold = ColdPrompts()
    full = _full(20_000)
    cold.computed("a", PlannedPrompt.full(full))
    assert cold.plan("a", full, BUDGETS, 500) == PlannedPrompt.full(full)
    typed = _full(20_000)
    typed.prefix += "z = 2"  # typing at the cursor: the same start
    assert cold.plan("a", typed, BUDGETS, 500) == PlannedPrompt.full(typed)
    assert isinstance(cold.plan("a", _full(20_000, "other = 3\n"), BUDGETS, 500), PromptBudgets)
    assert isinstance(cold.plan("b", full, BUDGETS, 500), PromptBudgets)  # another document
    cold.forget("a")
    assert isinstance(cold.plan("a", full, BUDGETS, 500), PromptBudgets)
    local = pb.CompleteRequest(path="a.py", prefix="y" * 500)
    cold.answered("a", PlannedPrompt(local, None), pb.RequestFigures(computed_tokens=40), ESTIMATE)
    assert isinstance(cold.plan("a", full, BUDGETS, 500), PromptBudgets)  # a local prompt warms nothing
    assert Layout.of(full) != Layout.of(_full(20_000, "other = 3\n"))


async def test_the_service_sends_the_local_prompt_until_the_full_one_is_prefilled() -> None:
    daemon = ScriptedDaemon(["pass"])
    retrieved: list[RetrievalQuery] = []

    def retrieve(q: RetrievalQuery, budget: int, ms: float, cancel: threading.Event) -> list[Snippet]:
        retrieved.append(q)
        return [SNIPPET]

    service = CompletionService(lambda: SETTINGS, daemon.stream, retrieve)
    at_end = query(LONG + "def last(value):\n    |")
    prompts = await service.prefill_prompts(at_end)
    assert [p.local for p in prompts] == [True, False]
    first = await service.complete(at_end)
    local = daemon.requests[-1]
    assert first.local and first.text == "pass" and not local.snippets and local == prompts[0].request
    assert estimated_tokens(local, ESTIMATE) == 182  # of the 256 an unmeasured daemon gets
    assert local.prefix.endswith("def last(value):\n    ")
    assert [s.text for s in prompts[1].request.snippets] == [SNIPPET.text]
    full = prompts[1].request
    assert estimated_tokens(full, ESTIMATE) == 1488
    assert full.prefix.endswith(local.prefix)
    figures = pb.RequestFigures(prompt_tokens=100, computed_tokens=100, total_ms=10.0)
    service.prefilled(at_end.uri, prompts[0], pb.PrefillResponse(prefilled=True, figures=figures))
    assert service.cold.speed.per_ms is None  # a background prefill's time measures nothing
    assert (await service.complete(query(LONG + "def last(value):\n    x|"))).local  # that warms nothing
    service.prefilled(at_end.uri, prompts[1], pb.PrefillResponse(prefilled=False, skipped="remote"))
    assert (await service.complete(query(LONG + "def last(value):\n    y|"))).local  # nor does a skip
    service.prefilled(at_end.uri, prompts[1], pb.PrefillResponse(prefilled=True))
    typed = query(LONG + "def last(value):\n    ret|")
    second = await service.complete(typed)
    assert not second.local and daemon.requests[-1].snippets[0].text == SNIPPET.text
    assert daemon.requests[-1].prefix.startswith(full.prefix[:256])


async def test_a_suggestion_with_the_full_prompt_warms_it_and_its_figures_measure_the_speed() -> None:
    daemon = ScriptedDaemon(["pass"])
    settings = dataclasses.replace(SETTINGS, cold_prompt_ms=0)  # always the full prompt
    service = CompletionService(lambda: settings, daemon.stream, None)
    daemon.figures = pb.RequestFigures(prompt_tokens=3000, computed_tokens=3000, generated_tokens=1)
    daemon.figures.time_to_first_token_ms = 6000.0
    at_end = query(LONG + "def last(value):\n    |")
    assert not (await service.complete(at_end)).local
    full = daemon.requests[-1]
    assert service.cold.speed.per_ms == estimated_tokens(full, ESTIMATE) / 6000.0
    settings = dataclasses.replace(SETTINGS, cold_prompt_ms=500)
    assert not (await service.complete(query(LONG + "def last(value):\n    x|"))).local  # warm
    other = query(LONG + "def last(value):\n    x|", uri="file:///w/b.py")
    fits = service.cold.speed.tokens_in(500)  # 123 estimated tokens, rounded down
    assert (await service.complete(other)).local  # cold: what the measured speed computes in 500 ms
    assert fits == 96
    assert estimated_tokens(daemon.requests[-1], ESTIMATE) == 71  # whole lines within the 96
