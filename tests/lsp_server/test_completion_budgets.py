"""Prompt budgets scaled to the room the daemon says its model has."""

from __future__ import annotations

from indexer.token_estimate import TokenEstimate
from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.budgets import PromptBudgets, fit_budgets
from lsp_server.config import CompletionSettings
from lsp_server.model_room import ModelRoom

SETTINGS = CompletionSettings(
    prefix_budget_tokens=1536, suffix_budget_tokens=512, context_budget_tokens=1024, max_tokens=64
)


def test_unknown_or_large_context_keeps_the_settings() -> None:
    wanted = PromptBudgets(1536, 512, 1024)
    assert fit_budgets(SETTINGS, ModelRoom()) == wanted
    assert fit_budgets(SETTINGS, ModelRoom(32768)) == wanted


def test_small_context_scales_every_budget_in_proportion() -> None:
    # room: int((2048 - 64 kept for the reply - 32 reserved) * 0.85) = 1659 of the wanted 3072
    assert fit_budgets(SETTINGS, ModelRoom(2048)) == PromptBudgets(829, 276, 553)


def test_a_large_max_tokens_leaves_the_prompt_the_half_the_daemon_keeps_for_it() -> None:
    settings = CompletionSettings(max_tokens=4096)
    # an older daemon that does not say: half of 512 kept for the reply
    fitted = fit_budgets(settings, ModelRoom(512))
    assert fitted.prefix + fitted.suffix + fitted.context == 189  # of int((512 - 256 - 32) * 0.85) = 190


def test_the_reply_reserve_is_the_daemons() -> None:
    info = pb.ModelInfo(
        model=pb.ModelDescription(context_length=512), reply_reserve_limit=128, chars_per_token=4.0
    )
    room = ModelRoom.of(info)
    assert room == ModelRoom(512, 128, 4.0)
    assert room.reply_reserve(4096) == 128
    assert room.reply_reserve(64) == 64
    assert ModelRoom(512).reply_reserve(4096) == 256
    # the prompt gets int((512 - 128 - 32) * 0.85) = 299 tokens, counted four characters a token
    fitted = fit_budgets(CompletionSettings(max_tokens=4096), room)
    assert fitted.estimate == TokenEstimate(4.0)
    assert fitted.prefix + fitted.suffix + fitted.context == 297
