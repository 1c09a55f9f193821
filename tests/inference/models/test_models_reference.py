"""Our architectures against transformers' reference implementations on tiny random checkpoints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from inference.layers.attention import GROUPED_QUERY_MAX_TOKENS
from inference.layers.paged_kv import AttentionMetadata, KVCache
from inference.loading import LoadedModel, load_model
from tests.fixtures.tiny_models import make_tiny_checkpoint

transformers = pytest.importorskip("transformers")

BLOCK = 4
LONG_PROMPT = (
    "class TextWrapper:\n    def __init__(self, width=70, initial_indent='', subsequent_indent=''):\n"
    "        self.width = width\n        self.initial_indent = initial_indent\n"
)
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "llama": ("llama", {}),
    "llama-tied": ("llama", {"tie_word_embeddings": True}),
    "llama-mha-bias": ("llama", {"num_key_value_heads": 4, "attention_bias": True, "mlp_bias": True}),
    "llama-linear": ("llama", {"rope_scaling": {"rope_type": "linear", "factor": 4.0}}),
    "llama-dynamic": (
        "llama",
        {"max_position_embeddings": 16, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}},
    ),
    "llama-llama3": (
        "llama",
        {
            "rope_scaling": {
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 32,
            }
        },
    ),
    "llama-yarn": (
        "llama",
        {"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}},
    ),
    "qwen2": ("qwen2", {"rope_theta": 1000000.0}),
    "qwen2-tied-sharded": ("qwen2", {"tie_word_embeddings": True, "max_shard_size": "40KB"}),
    "qwen3": ("qwen3", {}),
    "mistral-window": ("mistral", {"sliding_window": 6}),
    # Local layers (window 6, RoPE base 10k) around a global one (base 1M), an attention scale that
    # is not head_dim's, norms away from their initial values (Gemma's (1 + w) is checked).
    "gemma3": (
        "gemma3_text",
        {
            "sliding_window": 6,
            "layer_types": ["sliding_attention", "full_attention", "sliding_attention"],
            "num_hidden_layers": 3,
            "query_pre_attn_scalar": 24,
            "tie_word_embeddings": True,
            "norm_noise": 0.3,
        },
    ),
}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("reference")
    return {name: make_tiny_checkpoint(root / name, arch, **kw) for name, (arch, kw) in VARIANTS.items()}


def paged_logits(loaded: LoadedModel, ids: list[int], chunks: list[int] | None = None) -> torch.Tensor:
    """Logits of every position, computed through the paged KV pool in the given chunk sizes."""
    n_blocks = (len(ids) + BLOCK - 1) // BLOCK
    kv = KVCache.allocate(loaded.config, n_blocks, BLOCK, torch.float32, "cpu")
    table = torch.arange(n_blocks)
    out, start = [], 0
    for size in chunks or [len(ids)]:
        pos = torch.arange(start, start + size)
        meta = AttentionMetadata(table[pos // BLOCK] * BLOCK + pos % BLOCK, table, start + size, BLOCK)
        with torch.inference_mode():
            out.append(loaded.model(torch.tensor(ids[start : start + size]), pos, kv, meta))
        start += size
    return torch.cat(out)


def greedy(loaded: LoadedModel, prompt: list[int], steps: int) -> list[int]:
    """Greedy continuation: prefill, then one token per forward call through the paged KV."""
    total = len(prompt) + steps
    n_blocks = (total + BLOCK - 1) // BLOCK
    kv = KVCache.allocate(loaded.config, n_blocks, BLOCK, torch.float32, "cpu")
    table = torch.randperm(n_blocks, generator=torch.Generator().manual_seed(1))
    ids, fed = list(prompt), 0
    with torch.inference_mode():
        while len(ids) < total:
            pos = torch.arange(fed, len(ids))
            meta = AttentionMetadata(table[pos // BLOCK] * BLOCK + pos % BLOCK, table, len(ids), BLOCK)
            logits = loaded.model(torch.tensor(ids[fed:]), pos, kv, meta)
            fed = len(ids)
            ids.append(int(logits[-1].argmax()))
    return ids[len(prompt) :]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_logits_and_greedy_match_transformers(checkpoints: dict[str, Path], variant: str) -> None:
    path = checkpoints[variant]
    loaded = load_model(path, device="cpu")
    reference = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    short = loaded.tokenizer.encode("def fill(text, width=70):\n    return ")
    long = loaded.tokenizer.encode(LONG_PROMPT)
    # Short prompts take the grouped-query decode path of the attention, long ones the prefill path.
    assert (len(short), len(long)) == (14, 62)
    assert len(short) <= GROUPED_QUERY_MAX_TOKENS < len(long)
    for prompt in (short, long):
        ours = paged_logits(loaded, prompt)
        with torch.inference_mode():
            theirs = reference(torch.tensor([prompt])).logits[0]
        assert ours.dtype == torch.float32
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)

    prompt = short
    steps = 12
    reference.generation_config.eos_token_id = None  # compare a fixed number of steps, eos or not
    with torch.inference_mode():
        expected = reference.generate(torch.tensor([prompt]), max_new_tokens=steps, do_sample=False)
    expected = expected[0, len(prompt) :].tolist()
    assert greedy(loaded, prompt, steps) == expected
    # A random checkpoint that always repeats one token would make this comparison weak.
    assert len(set(expected)) > 1
