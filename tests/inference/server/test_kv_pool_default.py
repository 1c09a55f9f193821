"""A daemon with the default KV pool serves every prompt its own budget allows; a pool chosen too small
for a request still refuses it with RESOURCE_EXHAUSTED and says which flag to raise."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
import torch

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import DaemonError, InferenceClient
from inference.config import EngineConfig
from inference.engine import model_runner
from inference.layers.paged_kv import KVCache
from inference.loading import load_model
from inference.server.prompt_budget import PromptBudget
from tests.inference.server.helpers import start_daemon

# Far more tokens (1,201) than the tiny model's 512-token context, on one line: the budget cuts it to
# its maximum.
LONG_PROMPT = "a, " * 600


async def test_the_default_pool_serves_a_prompt_at_the_budgets_maximum(
    tiny_model_dir: Path, short_dir: Path
) -> None:
    running = await start_daemon(tiny_model_dir, short_dir, engine_config=EngineConfig())
    try:
        info = await running.client.model_info()
        context = info.model.context_length
        assert context == 512
        # The context and two sessions of the context's length (shorter than 4,096) beside it.
        assert (info.kv_blocks_total, info.kv_block_size) == (96, 16)
        request = pb.GenerateRequest(prompt=LONG_PROMPT, sampling=pb.SamplingParams(max_tokens=1))
        result = await InferenceClient.collect(running.client.generate(request))
        largest = PromptBudget(context_length=context, max_tokens=1).prompt_tokens
        assert result.figures.prompt_tokens == largest == 511
        assert result.figures.truncated_tokens > 0
        assert result.figures.generated_tokens == 1
    finally:
        await running.client.close()
        await running.daemon.stop()


async def test_a_pool_chosen_smaller_than_the_prompt_refuses_it_and_names_the_flag(
    tiny_model_dir: Path, short_dir: Path
) -> None:
    running = await start_daemon(tiny_model_dir, short_dir, engine_config=EngineConfig(kv_tokens=200))
    try:
        assert (await running.client.model_info()).kv_blocks_total == 13  # 208 tokens
        request = pb.GenerateRequest(prompt=LONG_PROMPT, sampling=pb.SamplingParams(max_tokens=1))
        with pytest.raises(DaemonError) as raised:
            await InferenceClient.collect(running.client.generate(request))
        assert raised.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert raised.value.message == (
            "prompt of 511 tokens does not fit the KV pool of 208 tokens (13 blocks of 16); start the "
            "daemon with a larger --kv-tokens (or --kv-cache-mb)"
        )
    finally:
        await running.client.close()
        await running.daemon.stop()


async def test_a_default_pool_that_memory_keeps_short_serves_a_context_it_holds(
    tiny_model_dir: Path, short_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_model(tiny_model_dir, "cpu").config
    per_token = KVCache.bytes_per_block(config, 1, torch.float32)
    # Three quarters of this hold 100 tokens: 6 blocks of 16, fewer than the 512-token context.
    monkeypatch.setattr(model_runner, "available_memory", lambda device: per_token * 100 * 4 // 3 + 1)
    running = await start_daemon(tiny_model_dir, short_dir, engine_config=EngineConfig())
    try:
        info = await running.client.model_info()
        assert (info.kv_blocks_total, info.model.context_length, info.reply_reserve_limit) == (6, 96, 48)
        request = pb.GenerateRequest(prompt=LONG_PROMPT, sampling=pb.SamplingParams(max_tokens=1))
        result = await InferenceClient.collect(running.client.generate(request))
        assert (
            result.figures.prompt_tokens == PromptBudget(context_length=96, max_tokens=1).prompt_tokens == 95
        )
        assert result.figures.generated_tokens == 1
    finally:
        await running.client.close()
        await running.daemon.stop()
