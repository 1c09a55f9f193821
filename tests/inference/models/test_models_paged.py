"""The paged KV path: chunking, block placement and slot rewrites do not change the logits."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from inference.layers.attention import GROUPED_QUERY_MAX_TOKENS, causal_mask
from inference.layers.paged_kv import AttentionMetadata, KVCache, gather_kv
from inference.loading import LoadedModel, load_model
from tests.fixtures.tiny_models import make_tiny_checkpoint

BLOCK = 4
TEXT = (
    "import heapq\n\ndef smallest(items, n):\n    return heapq.nsmallest(n, items)\n\n"
    "def largest(items, n):\n    return heapq.nlargest(n, items)\n"
)


@pytest.fixture(scope="module", params=["llama", "qwen3", "mistral", "gemma3_text"])
def loaded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> LoadedModel:
    extra: dict[str, object] = {"sliding_window": 5} if request.param in ("mistral", "gemma3_text") else {}
    path: Path = make_tiny_checkpoint(tmp_path_factory.mktemp(request.param), request.param, **extra)
    return load_model(path, device="cpu")


def run_chunks(
    loaded: LoadedModel, ids: list[int], chunks: list[int], table: torch.Tensor, pool: int
) -> torch.Tensor:
    """Logits for `ids` fed in `chunks`, stored in the blocks of `table` within a pool of `pool` blocks."""
    assert sum(chunks) == len(ids)
    kv = KVCache.allocate(loaded.config, pool, BLOCK, torch.float32, "cpu")
    out, start = [], 0
    for size in chunks:
        pos = torch.arange(start, start + size)
        meta = AttentionMetadata(table[pos // BLOCK] * BLOCK + pos % BLOCK, table, start + size, BLOCK)
        with torch.inference_mode():
            out.append(loaded.model(torch.tensor(ids[start : start + size]), pos, kv, meta))
        start += size
    return torch.cat(out)


def test_one_shot_chunked_and_token_by_token_agree(loaded: LoadedModel) -> None:
    ids = loaded.tokenizer.encode(TEXT)
    n_blocks = (len(ids) + BLOCK - 1) // BLOCK
    table = torch.arange(n_blocks)
    # One shot and the long chunk take the prefill path of the attention, single tokens the decode path.
    assert len(ids) - 10 > GROUPED_QUERY_MAX_TOKENS
    one_shot = run_chunks(loaded, ids, [len(ids)], table, n_blocks)
    uneven = [3, 1, 6, len(ids) - 10]
    chunked = run_chunks(loaded, ids, uneven, table, n_blocks)
    stepwise = run_chunks(loaded, ids, [1] * len(ids), table, n_blocks)
    assert one_shot.shape == (len(ids), loaded.config.vocab_size)
    torch.testing.assert_close(chunked, one_shot, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(stepwise, one_shot, rtol=1e-5, atol=1e-5)


def test_physical_blocks_do_not_matter(loaded: LoadedModel) -> None:
    ids = loaded.tokenizer.encode(TEXT)
    n_blocks = (len(ids) + BLOCK - 1) // BLOCK
    in_order = run_chunks(loaded, ids, [7, len(ids) - 7], torch.arange(n_blocks), n_blocks)
    # Scattered over a larger pool, in shuffled order: bit-for-bit the same.
    shuffled = torch.randperm(3 * n_blocks, generator=torch.Generator().manual_seed(0))[:n_blocks]
    scattered = run_chunks(loaded, ids, [7, len(ids) - 7], shuffled, 3 * n_blocks)
    assert torch.equal(scattered, in_order)
    # A consecutive run elsewhere in the pool (read in place rather than gathered).
    shifted = run_chunks(loaded, ids, [7, len(ids) - 7], torch.arange(n_blocks) + 5, n_blocks + 5)
    assert torch.equal(shifted, in_order)


def test_gather_reads_blocks_in_table_order() -> None:
    cache = torch.arange(6 * 2, dtype=torch.float32).view(1, 6, 2, 1)  # block b holds 2b, 2b+1 (one head)
    for table in ([4, 1, 2], [1, 2, 3], [5]):
        meta = AttentionMetadata(torch.tensor([0]), torch.tensor(table), 2 * len(table) - 1, 2)
        assert meta.consecutive_from == (None if table == [4, 1, 2] else table[0])
        expected = [float(2 * b + i) for b in table for i in range(2)][:-1]
        for start in (None, meta.consecutive_from):
            got = gather_kv(cache, meta.block_table, meta.context_len, start).flatten().tolist()
            assert got == expected


def test_rewriting_slots_rolls_back(loaded: LoadedModel) -> None:
    """Speculative rollback: K/V written for rejected tokens is simply overwritten by the next call."""
    ids = loaded.tokenizer.encode(TEXT)
    n_blocks = (len(ids) + BLOCK - 1) // BLOCK + 1
    table = torch.arange(n_blocks)
    kv = KVCache.allocate(loaded.config, n_blocks, BLOCK, torch.float32, "cpu")

    def call(tokens: list[int], start: int) -> torch.Tensor:
        pos = torch.arange(start, start + len(tokens))
        meta = AttentionMetadata(table[pos // BLOCK] * BLOCK + pos % BLOCK, table, start + len(tokens), BLOCK)
        with torch.inference_mode():
            return loaded.model(torch.tensor(tokens), pos, kv, meta)

    split = 10
    call(ids[:split], 0)
    call([5, 6, 7, 8, 9], split)  # a rejected speculation
    rewritten = call(ids[split:], split)
    fresh = run_chunks(loaded, ids, [len(ids)], table, n_blocks)
    torch.testing.assert_close(rewritten, fresh[split:], rtol=1e-5, atol=1e-5)


def test_causal_mask_with_sliding_window() -> None:
    mask = causal_mask(num_new=3, context_len=6, sliding_window=2, device=torch.device("cpu"))
    assert mask is not None
    # Row i is the token at position 3 + i: it sees itself and the one before it.
    expected = torch.tensor(
        [
            [False, False, True, True, False, False],
            [False, False, False, True, True, False],
            [False, False, False, False, True, True],
        ]
    )
    assert torch.equal(mask, expected)
    assert causal_mask(num_new=1, context_len=6, sliding_window=None, device=torch.device("cpu")) is None
    # Keys from position 2 on only (the blocks before are not read): the same rows, minus two columns.
    shifted = causal_mask(num_new=3, context_len=6, sliding_window=2, device=torch.device("cpu"), key_start=2)
    assert shifted is not None and torch.equal(shifted, expected[:, 2:])
    assert causal_mask(num_new=1, context_len=6, sliding_window=2, device=torch.device("cpu"), key_start=4) is None


def test_local_layers_read_only_the_blocks_of_their_window(loaded: LoadedModel) -> None:
    """Poisoning (NaN) every block of a sliding-window layer that lies wholly before the window of
    the first token fed leaves the logits as they were: those blocks are not read, so the attention
    of a local layer costs its window whatever the context."""
    window = loaded.config.layer_sliding_windows[0]
    if window is None:
        pytest.skip("no sliding window")
    ids = loaded.tokenizer.encode(TEXT)
    n_blocks = (len(ids) + BLOCK - 1) // BLOCK
    table = torch.arange(n_blocks)
    local = [i for i, w in enumerate(loaded.config.layer_sliding_windows) if w is not None]
    split = len(ids) - 3  # then a decode-sized call of 3 rows
    unseen_blocks = (split - window + 1) // BLOCK
    assert unseen_blocks >= 2
    results = []
    for poison in (False, True):
        kv = KVCache.allocate(loaded.config, n_blocks, BLOCK, torch.float32, "cpu")
        out = []
        for start, end in ((0, split), (split, len(ids))):
            if poison and start:
                for layer in local:
                    kv.k[layer][:, :unseen_blocks] = float("nan")
                    kv.v[layer][:, :unseen_blocks] = float("nan")
            pos = torch.arange(start, end)
            meta = AttentionMetadata(table[pos // BLOCK] * BLOCK + pos % BLOCK, table, end, BLOCK)
            with torch.inference_mode():
                out.append(loaded.model(torch.tensor(ids[start:end]), pos, kv, meta))
        results.append(out[1])
    assert torch.equal(results[1], results[0])


def test_kv_cache_sizes() -> None:
    from inference.model_config import ModelConfig

    config = ModelConfig(
        model_type="llama",
        vocab_size=10,
        hidden_size=8,
        intermediate_size=16,
        num_layers=3,
        num_heads=2,
        num_kv_heads=1,
        head_dim=4,
        max_position_embeddings=32,
    )
    kv = KVCache.allocate(config, num_blocks=5, block_size=16, dtype=torch.float32, device="cpu")
    assert len(kv.k) == len(kv.v) == 3
    assert kv.k[0].shape == (1, 5, 16, 4)
    assert (kv.num_blocks, kv.block_size) == (5, 16)
    per_block = KVCache.bytes_per_block(config, 16, torch.float32)
    assert per_block == 2 * 3 * 16 * 1 * 4 * 4
    assert per_block * 5 == sum(t.numel() * t.element_size() for t in kv.k + kv.v)
    assert KVCache.bytes_per_block(config, 16, torch.bfloat16) == per_block // 2


def test_bfloat16_weights_and_pool_track_float32(loaded: LoadedModel) -> None:
    """The CUDA default dtype, exercised on the CPU: same argmax almost everywhere, float32 logits out."""
    half = load_model(loaded.path, device="cpu", dtype=torch.bfloat16)
    ids = loaded.tokenizer.encode(TEXT)
    n_blocks = (len(ids) + BLOCK - 1) // BLOCK
    kv = KVCache.allocate(half.config, n_blocks, BLOCK, torch.bfloat16, "cpu")
    table = torch.arange(n_blocks)
    pos = torch.arange(len(ids))
    meta = AttentionMetadata(table[pos // BLOCK] * BLOCK + pos % BLOCK, table, len(ids), BLOCK)
    with torch.inference_mode():
        low = half.model(torch.tensor(ids), pos, kv, meta)
    high = run_chunks(loaded, ids, [len(ids)], table, n_blocks)
    assert low.dtype == torch.float32
    assert kv.k[0].dtype == torch.bfloat16 and kv.k[0].abs().sum() > 0
    agree = (low.argmax(-1) == high.argmax(-1)).float().mean().item()
    assert agree >= 0.9
    assert (low - high).abs().max().item() < 0.05 * high.abs().max().item()
