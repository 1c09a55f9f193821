"""Speculative decoding on the model evaluation's own task, through the project engine.

The single-line infilling prompts of ``codedraft bench model`` are run on one ``LLMEngine`` with the
target and its draft: plain decoding against draft speculation (and ``auto``), greedy, each completion
ending at the template's end tokens or at the end of its line, as the evaluation scores it. Reported:
tokens/s ratio, acceptance and whether the outputs are identical.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from bench.engine import bench_speculation
from inference.config import EngineConfig, SamplingParams, SpecMode
from inference.engine.engine import LLMEngine
from inference.engine.sequence import Request
from inference.loading import load_model


def speculation_figures(
    target_dir: Path, draft_dir: Path, prompts: list[str], max_tokens: int
) -> dict[str, Any]:
    """Draft speculation versus plain decoding on ``prompts`` (FIM prompts, special tokens as text)."""
    target = load_model(target_dir, "cpu", dtype=torch.float32)
    draft = load_model(draft_dir, "cpu", dtype=torch.float32)
    engine = LLMEngine.from_loaded(target, EngineConfig(kv_cache_mb=256.0), draft)
    sampling = SamplingParams(
        max_tokens=max_tokens, stop=("\n",), stop_token_ids=tuple(target.fim.stop_token_ids)
    )
    requests = [
        Request(f"infill{i}", prompt_token_ids=target.tokenizer.encode(prompt), sampling=sampling)
        for i, prompt in enumerate(prompts)
    ]
    title = "speculative decoding on the infilling prompts (SPM), draft model"
    return bench_speculation(title, engine, requests, [SpecMode.DRAFT, SpecMode.AUTO])
