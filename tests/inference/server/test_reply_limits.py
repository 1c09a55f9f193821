"""The reply limit's one owner (inference/reply_limits.py): defaults, clamps and the reply's reserve."""

from __future__ import annotations

from inference.reply_limits import (
    DEFAULT_COMPLETION_TOKENS,
    DEFAULT_GENERATION_TOKENS,
    RequestLimits,
    reply_reserve,
    reply_reserve_limit,
    reply_tokens,
    request_limits,
)
from inference.server.prompt_budget import PromptBudget


def test_a_large_context_keeps_the_defaults_and_reserves_half() -> None:
    assert request_limits(8192, 1024, has_draft_model=True) == RequestLimits(
        context_length=8192,
        max_new_tokens=1024,
        default_completion_tokens=DEFAULT_COMPLETION_TOKENS,
        default_generation_tokens=DEFAULT_GENERATION_TOKENS,
        has_draft_model=True,
        reply_reserve_limit=4096,
    )
    assert (DEFAULT_COMPLETION_TOKENS, DEFAULT_GENERATION_TOKENS) == (128, 512)


def test_the_defaults_are_lowered_to_max_new_tokens_and_to_the_reserve() -> None:
    assert request_limits(8192, 100, has_draft_model=False) == RequestLimits(8192, 100, 100, 100, False, 4096)
    assert request_limits(512, 1024, has_draft_model=False) == RequestLimits(512, 511, 128, 256, False, 256)
    assert request_limits(200, 1024, has_draft_model=False) == RequestLimits(200, 199, 100, 100, False, 100)


def test_max_new_tokens_leaves_the_prompt_one_token() -> None:
    assert request_limits(2, 1024, has_draft_model=False) == RequestLimits(2, 1, 1, 1, False, 1)


def test_reply_tokens_clamps_to_max_new_tokens_and_to_the_contexts_room() -> None:
    assert reply_tokens(50, 512) == 50
    assert reply_tokens(600, 512) == 512
    assert reply_tokens(600, 512, max_new_tokens=300) == 300
    assert reply_tokens(600, 512, prompt_tokens=400, max_new_tokens=300) == 112
    assert reply_tokens(600, 512, prompt_tokens=512) == 1  # never below one token


def test_request_limits_clamp_a_requests_max_tokens() -> None:
    limits = request_limits(512, 400, has_draft_model=False)
    assert limits.reply_tokens(10**9) == 400
    assert limits.reply_tokens(7) == 7


def test_the_reply_reserve_is_max_tokens_up_to_half_the_context() -> None:
    assert reply_reserve_limit(512) == 256
    assert reply_reserve_limit(1) == 1
    assert reply_reserve(64, 512) == 64
    assert reply_reserve(400, 512) == 256


def test_the_prompt_budget_uses_the_owners_rules() -> None:
    budget = PromptBudget(512, 400)
    assert (budget.reserved_tokens, budget.prompt_tokens) == (256, 256)
    assert budget.reply_tokens(300) == 212
    assert budget.reply_tokens(10) == 400
