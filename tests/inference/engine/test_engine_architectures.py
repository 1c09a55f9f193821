"""Cache hits and speculation are exact on every supported architecture (tiny random checkpoints),
including a sliding-window model whose window is shorter than the prompts."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from inference.config import SamplingParams, SpecMode
from inference.engine.sequence import Request
from inference.loading import load_model
from tests.fixtures.tiny_models import make_tiny_checkpoint
from tests.inference.engine.engine_helpers import PROMPTS, make_engine, one_torch_thread, run_all

pytestmark = pytest.mark.usefixtures(one_torch_thread.__name__)


@pytest.mark.parametrize(
    ("arch", "overrides"),
    [
        ("qwen2", {}),
        ("qwen3", {}),
        ("mistral", {"sliding_window": 8}),
        ("llama", {"tie_word_embeddings": True}),
    ],
)
def test_cache_hit_and_speculation_are_exact(arch: str, overrides: dict[str, object], tmp_path: Path) -> None:
    make_tiny_checkpoint(tmp_path / arch, arch, **overrides)
    model = load_model(tmp_path / arch, device="cpu", dtype=torch.float32)
    ids = model.tokenizer.encode(PROMPTS[2])

    def request(name: str, mode: SpecMode) -> Request:
        sampling = SamplingParams(max_tokens=24, ignore_eos=True)
        return Request(name, prompt_token_ids=ids, sampling=sampling, spec_mode=mode)

    cold = run_all(make_engine(model, enable_prefix_cache=False), [request("cold", SpecMode.OFF)])["cold"]
    engine = make_engine(model)
    run_all(engine, [request("first", SpecMode.OFF)])
    hit = run_all(engine, [request("hit", SpecMode.OFF)])["hit"]
    spec = run_all(engine, [request("spec", SpecMode.NGRAM)])["spec"]
    assert hit.metrics.reused_tokens == (len(ids) - 1) // 4 * 4
    assert cold.token_ids == hit.token_ids == spec.token_ids
    torch.testing.assert_close(cold.logits[0], hit.logits[0], rtol=0, atol=1e-5)
    engine.check_invariants()
