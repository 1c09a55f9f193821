"""Cache hits and speculation are exact on every supported architecture (tiny random checkpoints),
including sliding-window models (Mistral; Gemma 3's local layers around a global one) whose window
is shorter than the prompts."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from inference.loading import load_model
from tests.fixtures.tiny_models import make_tiny_checkpoint
from tests.inference.engine.engine_helpers import (
    assert_cache_hit_and_speculation_exact,
    exactness_runs,
    one_torch_thread,
)

pytestmark = pytest.mark.usefixtures(one_torch_thread.__name__)


@pytest.mark.parametrize(
    ("arch", "overrides"),
    [
        ("qwen2", {}),
        ("qwen3", {}),
        ("mistral", {"sliding_window": 8}),
        ("llama", {"tie_word_embeddings": True}),
        (
            "gemma3_text",
            {
                "sliding_window": 8,
                "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
                "num_hidden_layers": 3,
                "tie_word_embeddings": True,
                "norm_noise": 0.3,
            },
        ),
    ],
)
def test_cache_hit_and_speculation_are_exact(arch: str, overrides: dict[str, object], tmp_path: Path) -> None:
    make_tiny_checkpoint(tmp_path / arch, arch, **overrides)
    model = load_model(tmp_path / arch, device="cpu", dtype=torch.float32)
    assert_cache_hit_and_speculation_exact(model)


def test_gemma3_served_from_k_quant_blocks_with_8_bit_activations_is_exact(tmp_path: Path) -> None:
    """What `make run` serves: Gemma 3's local layers in the `native_q8` form that `auto` picks for a
    K-quant file, whose rows do not depend on the other rows of their call: a cache hit's and prompt
    lookup's logits are the cold plain run's, bit for bit (local layers attended by SDPA were not)."""
    from gguf import GGMLQuantizationType as Q

    from tests.fixtures.tiny_gguf import write_gguf

    shape = {"hidden_size": 256, "head_dim": 64, "intermediate_size": 512, "initializer_range": 0.02}
    checkpoint = make_tiny_checkpoint(
        tmp_path / "gemma",
        "gemma3_text",
        sliding_window=8,
        layer_types=["sliding_attention", "full_attention", "sliding_attention"],
        num_hidden_layers=3,
        tie_word_embeddings=True,
        **shape,
    )
    write_gguf(checkpoint, tmp_path / "model.gguf", Q.Q4_K, types={".v_proj.": Q.Q6_K, ".down_proj.": Q.Q6_K})
    model = load_model(tmp_path / "model.gguf", device="cpu", weights="auto")
    assert model.weights == "native_q8"
    assert_cache_hit_and_speculation_exact(model)
    runs = exactness_runs(model)
    assert len(runs.cold.logits) == len(runs.hit.logits) == len(runs.spec.logits) == 24
    for cold, hit, spec in zip(runs.cold.logits, runs.hit.logits, runs.spec.logits, strict=True):
        assert torch.equal(cold, hit) and torch.equal(cold, spec)
