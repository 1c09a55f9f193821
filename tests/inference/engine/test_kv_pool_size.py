"""The KV pool's size: sized by the model and the language server's work by default, bounded by memory,
chosen by --kv-tokens / --kv-cache-mb when given."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import torch

from inference.config import EngineConfig
from inference.engine import model_runner
from inference.engine.kv_cache import KVCacheManager
from inference.engine.kv_pool_size import (
    DEFAULT_SESSIONS,
    SESSION_TOKENS,
    default_pool,
    pool_line,
    wanted_tokens,
)
from inference.engine.model_runner import pool_size
from inference.layers.paged_kv import KVCache
from inference.loading import load_model
from inference.model_config import ModelConfig
from inference.server.prompt_budget import PromptBudget
from lsp_server.completion.budgets import RESERVED_TOKENS
from lsp_server.config import CompletionSettings, NextEditSettings

GIB = 1024**3

# The 1.7B Llama (SmolLM2-1.7B's shape): 24 layers, 32 KV heads of 64, an 8,192-token context.
LLAMA_1_7B = ModelConfig(
    model_type="llama",
    vocab_size=49152,
    hidden_size=2048,
    intermediate_size=8192,
    num_layers=24,
    num_heads=32,
    num_kv_heads=32,
    head_dim=64,
    max_position_embeddings=8192,
)
PER_TOKEN_FLOAT32 = 2 * 24 * 32 * 64 * 4  # K and V of every layer: 384 KiB


def _admits(pool_blocks: int, prompt_tokens: int) -> bool:
    """The engine's admission rule (`LLMEngine.add_request`): the prompt and one reply token fit."""
    return KVCacheManager(pool_blocks, 16, True).blocks_for(prompt_tokens + 1) <= pool_blocks


def test_the_default_pool_of_the_1_7b_shape_holds_the_daemons_largest_prompt_and_two_sessions() -> None:
    pool = pool_size(LLAMA_1_7B, 16, torch.float32)
    assert (pool.blocks, pool.tokens, pool.reason) == (1024, 8192 + 2 * 4096, "sized by the model")
    assert pool.bytes == 16384 * PER_TOKEN_FLOAT32 == 6 * GIB
    assert pool.short_of_context == 0
    largest = PromptBudget(context_length=8192, max_tokens=1).prompt_tokens
    assert largest == 8191 and _admits(pool.blocks, largest)
    # Today's default of 512 MiB held 85 blocks: the 2,556-token prompt was refused.
    assert not _admits(512 * 1024 * 1024 // (16 * PER_TOKEN_FLOAT32), 2556)


def test_memory_bounds_the_sessions_first_then_the_context() -> None:
    # 4 GiB available: three quarters hold the context exactly, no session beside it.
    bounded = pool_size(LLAMA_1_7B, 16, torch.float32, available_bytes=4 * GIB)
    assert (bounded.tokens, bounded.reason, bounded.short_of_context) == (
        8192,
        "sized by the model, bounded by memory",
        0,
    )
    assert _admits(bounded.blocks, 8191)
    # 2 GiB: even the context does not fit; the pool is what memory allows and says how short it is.
    short = pool_size(LLAMA_1_7B, 16, torch.float32, available_bytes=2 * GIB)
    assert (short.tokens, short.reason, short.short_of_context) == (4096, "bounded by memory", 4096)
    # Plenty: the bound changes nothing.
    assert pool_size(LLAMA_1_7B, 16, torch.float32, available_bytes=64 * GIB).tokens == 16384
    # So little that not one block fits: one block, never none.
    assert default_pool(8192, 16, PER_TOKEN_FLOAT32, 1).blocks == 1


def test_a_small_context_keeps_sessions_no_longer_than_itself() -> None:
    assert wanted_tokens(512) == 512 + DEFAULT_SESSIONS * 512
    assert wanted_tokens(32768) == 32768 + DEFAULT_SESSIONS * SESSION_TOKENS
    assert default_pool(500, 16, 4, None).blocks == -(-(500 + 2 * 500) // 16)


def test_flags_choose_the_pool_blocks_then_tokens_then_megabytes() -> None:
    per_block = KVCache.bytes_per_block(LLAMA_1_7B, 16, torch.float32)
    assert per_block == 16 * PER_TOKEN_FLOAT32
    assert pool_size(LLAMA_1_7B, 16, torch.float32, tokens=3000).tokens == 3008
    assert pool_size(LLAMA_1_7B, 16, torch.float32, tokens=3000).reason == "--kv-tokens"
    megabytes = pool_size(LLAMA_1_7B, 16, torch.float32, megabytes=512)
    assert (megabytes.blocks, megabytes.reason) == (85, "--kv-cache-mb")
    assert pool_size(LLAMA_1_7B, 16, torch.float32, blocks=7, tokens=3000, megabytes=512).blocks == 7
    assert pool_size(LLAMA_1_7B, 16, torch.float32, tokens=3000, megabytes=512).reason == "--kv-tokens"
    # A flag is what the user asked for: memory does not bound it.
    assert pool_size(LLAMA_1_7B, 16, torch.float32, tokens=30000, available_bytes=GIB).tokens == 30000


def test_a_session_holds_the_language_servers_default_prompts_and_replies() -> None:
    completion = CompletionSettings()
    asked = (
        completion.prefix_budget_tokens
        + completion.suffix_budget_tokens
        + completion.context_budget_tokens
        + RESERVED_TOKENS
        + completion.max_tokens
    )
    assert asked <= SESSION_TOKENS
    next_edit = NextEditSettings()
    assert next_edit.context_budget_tokens + next_edit.history_budget_tokens <= SESSION_TOKENS // 2


def test_a_default_pool_that_memory_keeps_short_of_the_context_is_a_warning(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    target = load_model(tiny_model_dir, "cpu")
    per_token = KVCache.bytes_per_block(target.config, 1, target.dtype)
    # Three quarters of this hold 100 tokens: 6 blocks of 16.
    monkeypatch.setattr(model_runner, "available_memory", lambda device: per_token * 100 * 4 // 3 + 1)
    with caplog.at_level(logging.WARNING, logger="inference.engine.model_runner"):
        runner, _ = model_runner.runners_for(target, None, EngineConfig())
    assert runner.num_blocks == 6 and runner.sizing is not None
    assert runner.sizing.reason == "bounded by memory"
    assert [record.getMessage() for record in caplog.records] == [
        f"the KV pool holds 96 tokens, 416 fewer than {target.name}'s context of 512: memory allows no "
        "more, so the daemon serves a context of that many tokens (free memory, or choose with --kv-tokens)"
    ]


def test_the_start_up_line_gives_the_pool_in_tokens_against_the_context() -> None:
    assert pool_line(1024, 16, 8192) == (
        "KV pool: 16,384 tokens (1,024 blocks of 16; holds the context of 8,192 tokens)"
    )
    assert pool_line(6, 16, 512) == (
        "KV pool: 96 tokens (6 blocks of 16; fewer than the context of 512 tokens: longer prompts are "
        "refused)"
    )
