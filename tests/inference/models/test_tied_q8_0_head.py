"""A tied head stored in Q8_0 (Gemma 3's 262k-row `token_embd`) is served from the file's blocks in the
float16 form: one copy for the head and the embedding, the same values as the float32 form."""

from __future__ import annotations

from pathlib import Path

import torch
from gguf import GGMLQuantizationType as Q
from torch import nn

from inference.layers.block_linear import Q8_0Linear
from inference.layers.linear import Float16Linear, TransposedLinear
from inference.layers.q8_0_embedding import Q8_0Embedding
from inference.loading import load_model
from tests.fixtures.tiny_gguf import write_gguf
from tests.fixtures.tiny_models import make_tiny_checkpoint

GEMMA3: dict[str, object] = {
    "sliding_window": 6,
    "layer_types": ["sliding_attention", "full_attention"],
    "num_hidden_layers": 2,
    "tie_word_embeddings": True,
    "query_pre_attn_scalar": 16,
}


def test_a_q8_0_tied_head_is_shared_with_the_embedding(tmp_path: Path) -> None:
    checkpoint = make_tiny_checkpoint(tmp_path / "gemma", "gemma3_text", **GEMMA3)
    write_gguf(checkpoint, tmp_path / "model.gguf", Q.Q8_0)
    served = load_model(tmp_path / "model.gguf", device="cpu", weights="float16").model
    reference = load_model(tmp_path / "model.gguf", device="cpu", weights="float32").model
    assert isinstance(served.lm_head, Q8_0Linear)
    assert isinstance(served.model.embed_tokens, Q8_0Embedding)
    assert isinstance(reference.lm_head, TransposedLinear)
    assert isinstance(reference.model.embed_tokens, nn.Embedding)
    assert served.parameter_count == reference.parameter_count
    ids = torch.arange(reference.config.vocab_size)
    with torch.inference_mode():
        # The embedding rows are the float32 form's, bit for bit; the head multiplies by the same
        # weights (sums in another order).
        assert torch.equal(served.model.embed_tokens(ids), reference.model.embed_tokens(ids))
        hidden = torch.randn(3, reference.config.hidden_size, generator=torch.Generator().manual_seed(0))
        torch.testing.assert_close(served.lm_head(hidden), reference.lm_head(hidden), rtol=0, atol=1e-5)
    assert served.model.embed_tokens.head[0] is served.lm_head


def test_a_head_q8_0_does_not_hold_stays_float16(tmp_path: Path) -> None:
    checkpoint = make_tiny_checkpoint(tmp_path / "gemma", "gemma3_text", **GEMMA3)
    served = load_model(checkpoint, device="cpu", weights="float16")
    assert isinstance(served.model.lm_head, Float16Linear)
    assert isinstance(served.model.model.embed_tokens, nn.Embedding)
