"""Prompt budgets scaled to the daemon's model context."""

from __future__ import annotations

from lsp_server.completion.budgets import HEADROOM, RESERVED_TOKENS, PromptBudgets, fit_budgets
from lsp_server.config import CompletionSettings

SETTINGS = CompletionSettings(
    prefix_budget_tokens=1536, suffix_budget_tokens=512, context_budget_tokens=1024, max_tokens=64
)


def test_unknown_or_large_context_keeps_the_settings() -> None:
    wanted = PromptBudgets(1536, 512, 1024)
    assert fit_budgets(SETTINGS, 0) == wanted
    assert fit_budgets(SETTINGS, 32768) == wanted


def test_small_context_scales_every_budget_in_proportion() -> None:
    fitted = fit_budgets(SETTINGS, 2048)
    room = int((2048 - 64 - RESERVED_TOKENS) * HEADROOM)
    assert fitted.prefix + fitted.suffix + fitted.context <= room
    assert fitted.prefix > fitted.context > fitted.suffix > 0
    assert abs(fitted.prefix / fitted.suffix - 3) < 0.05


def test_a_large_max_tokens_leaves_the_prompt_the_half_the_daemon_keeps_for_it() -> None:
    settings = CompletionSettings(max_tokens=4096)
    fitted = fit_budgets(settings, 512)
    assert 0 < fitted.prefix + fitted.suffix + fitted.context <= (512 - 256 - RESERVED_TOKENS) * HEADROOM
