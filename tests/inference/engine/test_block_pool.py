"""BlockPool and KVCacheManager: sharing, reuse after edits, LRU eviction, rollback, exact block ids."""

from __future__ import annotations

from collections import Counter

import pytest

from inference.engine.block_pool import ROOT_HASH, BlockPool, hash_block
from inference.engine.errors import ResourceExhaustedError
from inference.engine.kv_cache import KVCacheManager


def _cached(pool: BlockPool) -> int:
    """Blocks indexed by prefix hash (`check_invariants` holds the index and the blocks' hashes equal)."""
    return sum(block.block_hash is not None for block in pool.blocks)


def test_chained_hash_depends_on_the_whole_prefix() -> None:
    first = hash_block(ROOT_HASH, [1, 2])
    assert first == hash_block(b"", [1, 2])
    second = hash_block(first, [3, 4])
    assert second != hash_block(hash_block(ROOT_HASH, [9, 2]), [3, 4])  # same block [3, 4], different parent
    kv = KVCacheManager(num_blocks=4, block_size=2)
    tokens = [1, 2, 3, 4, 5, 6, 7]
    kv.allocate_sequence("s", tokens)
    kv.commit("s", tokens, 7)
    assert _cached(kv.pool) == 3  # the partial block [7] is not hashed
    assert kv.pool.lookup(first) == 0
    assert kv.pool.lookup(second) == 1
    assert kv.pool.lookup(hash_block(second, [5, 6])) == 2


def test_allocate_release_and_lru_order() -> None:
    pool = BlockPool(4)
    first = pool.allocate(2)
    assert first == [0, 1]
    pool.register(0, b"h0")
    pool.register(1, b"h1")
    pool.release(reversed(first))  # tail first: block 1 becomes the first to evict among cached ones
    pool.check_invariants(Counter())
    assert _cached(pool) == pool.num_cached_idle == 2
    taken = pool.allocate(3)
    assert taken == [2, 3, 1]  # never-cached blocks first, then the LRU cached one (the tail)
    assert pool.lookup(b"h1") is None and pool.lookup(b"h0") == 0
    assert pool.evictions == 1
    pool.check_invariants(Counter(taken))
    with pytest.raises(ResourceExhaustedError, match="need 2 free blocks, 1 of 4"):
        pool.allocate(2)
    pool.release(taken)
    pool.check_invariants(Counter())


def test_double_release_and_wrong_refcount_are_caught() -> None:
    pool = BlockPool(2)
    (block,) = pool.allocate(1)
    with pytest.raises(AssertionError, match="reference count 1, live references 0"):
        pool.check_invariants(Counter())
    pool.release([block])
    with pytest.raises(AssertionError, match="released with reference count 0"):
        pool.release([block])
    pool.check_invariants(Counter())


def test_duplicate_register_keeps_first_block() -> None:
    pool = BlockPool(3)
    a, b = pool.allocate(2)
    assert pool.register(a, b"same")
    assert not pool.register(b, b"same")
    assert pool.lookup(b"same") == a
    pool.release([a, b])
    pool.check_invariants(Counter())


def test_prefix_sharing_and_edit_reuse_exact_counts() -> None:
    kv = KVCacheManager(num_blocks=16, block_size=4)
    prompt = list(range(100, 114))  # 14 tokens: 3 full blocks + 2
    assert kv.allocate_sequence("a", prompt) == 0
    assert kv.block_table("a") == [0, 1, 2, 3]
    kv.commit("a", prompt, num_computed=14)
    # A second request with the same prompt shares the 3 full blocks and computes only the rest.
    assert kv.allocate_sequence("b", prompt) == 12
    assert kv.block_table("b")[:3] == [0, 1, 2]
    assert kv.block_table("b")[3] == 4
    kv.check_invariants()
    # An edit at token 9 (inside block 2) reuses blocks 0 and 1 only.
    edited = [*prompt[:9], 7, *prompt[10:]]
    assert kv.allocate_sequence("c", edited) == 8
    kv.check_invariants()
    for seq in ("a", "b", "c"):
        kv.free(seq)
    kv.check_invariants()
    assert kv.pool.num_free == 16


def test_whole_prompt_hit_still_computes_the_last_block() -> None:
    kv = KVCacheManager(num_blocks=8, block_size=4)
    prompt = list(range(8))
    kv.allocate_sequence("a", prompt)
    kv.commit("a", prompt, 8)
    kv.free("a")
    assert kv.allocate_sequence("b", prompt) == 4  # the last token needs logits: block 1 is recomputed
    assert kv.allocate_sequence("c", [*prompt, 99]) == 8
    kv.free("b")
    kv.free("c")
    kv.check_invariants()


def test_growth_truncate_and_commit_after_rollback() -> None:
    kv = KVCacheManager(num_blocks=8, block_size=4)
    tokens = list(range(6))
    kv.allocate_sequence("s", tokens)
    kv.commit("s", tokens, 5)  # the last prompt token is not fed yet
    kv.ensure_capacity("s", 6 + 5)  # verify 5 speculative tokens
    assert len(kv.block_table("s")) == 3
    assert kv.slots("s", 5, 11) == [5, 6, 7, 8, 9, 10]
    kv.truncate("s", 7)  # 1 proposal accepted: positions 0..6 computed
    assert kv.block_table("s") == [0, 1]
    tokens += [6, 7]
    kv.commit("s", tokens, 7)
    assert _cached(kv.pool) == 1
    with pytest.raises(ValueError, match="committed"):
        kv.truncate("s", 3)
    kv.free("s")
    kv.check_invariants()
    assert kv.pool.num_free == 8


def test_full_pool_evicts_then_fails_without_leaking() -> None:
    kv = KVCacheManager(num_blocks=4, block_size=2)
    old = [1, 2, 3, 4, 5]
    kv.allocate_sequence("old", old)
    kv.commit("old", old, 5)
    kv.free("old")
    assert _cached(kv.pool) == 2
    # Needs all 4 blocks: both cached blocks are evicted.
    assert kv.allocate_sequence("new", [9, 9, 9, 9, 9, 9, 9]) == 0
    assert _cached(kv.pool) == 0
    with pytest.raises(ResourceExhaustedError, match="KV cache full"):
        kv.allocate_sequence("big", [1, 2, 3])
    assert "big" not in kv
    kv.check_invariants()
    kv.free("new")
    kv.check_invariants()


def test_failed_allocation_returns_prefix_hit_blocks() -> None:
    kv = KVCacheManager(num_blocks=3, block_size=2)
    shared = [1, 2, 3, 4, 5]
    kv.allocate_sequence("a", shared)
    kv.commit("a", shared, 5)
    kv.free("a")
    kv.allocate_sequence("hog", [7, 7, 7])  # takes the 1 free block and evicts one cached block
    with pytest.raises(ResourceExhaustedError):
        kv.allocate_sequence("b", [1, 2, 3, 4, 5, 6, 7, 8])
    kv.check_invariants()
    kv.free("hog")
    kv.check_invariants()


def test_disabled_caching_never_reuses() -> None:
    kv = KVCacheManager(num_blocks=8, block_size=2, enable_caching=False)
    prompt = [1, 2, 3, 4, 5]
    kv.allocate_sequence("a", prompt)
    kv.commit("a", prompt, 5)
    assert kv.allocate_sequence("b", prompt) == 0
    kv.free("a")
    kv.free("b")
    kv.check_invariants()


def test_an_edit_keeps_the_table_consecutive_and_the_old_branch_cached() -> None:
    copies: list[tuple[int, int]] = []
    kv = KVCacheManager(num_blocks=8, block_size=4, copy_block=lambda src, dst: copies.append((src, dst)))
    before = list(range(12))  # blocks 0, 1, 2
    kv.allocate_sequence("a", before)
    kv.commit("a", before, 12)
    assert kv.block_table("a") == [0, 1, 2]
    kv.free("a")
    after = [*before[:6], 99, *before[7:]]  # an edit in block 1
    # Block 0, and the first two tokens of block 1, which held the text before the edit.
    assert kv.allocate_sequence("b", after) == 6
    # Block 1's content moved to block 3 (the front free block) and is still found by its hash; block
    # 1 itself, still holding that K/V, becomes the edited sequence's second block, so its first two
    # rows need no copy; the sequence reads blocks 0, 1, 2 in place.
    assert kv.block_table("b") == [0, 1, 2]
    assert copies == [(1, 3), (2, 4)]
    kv.check_invariants()
    kv.free("b")
    assert kv.allocate_sequence("c", [*before, 5]) == 12  # the old branch is whole again
    assert kv.block_table("c") == [0, 3, 4, 5]
    kv.check_invariants()


def test_the_sequences_own_next_block_is_not_moved() -> None:
    copies: list[tuple[int, int]] = []
    kv = KVCacheManager(num_blocks=8, block_size=4, copy_block=lambda src, dst: copies.append((src, dst)))
    prompt = list(range(8))
    kv.allocate_sequence("a", prompt)
    kv.commit("a", prompt, 8)
    kv.free("a")
    # The whole prompt is cached, but its last token is recomputed for the logits: block 1 holds that
    # very text, so it stays cached where it is and the sequence gets a copy of its first 3 rows.
    assert kv.allocate_sequence("b", prompt) == 7
    assert copies == [(1, 2)]
    assert kv.allocate_sequence("c", [*prompt, 99]) == 8
    kv.check_invariants()


def test_a_partial_hit_copies_the_longest_matching_sibling() -> None:
    copies: list[tuple[int, int]] = []
    kv = KVCacheManager(num_blocks=12, block_size=4, copy_block=lambda src, dst: copies.append((src, dst)))
    stem = [1, 2, 3, 4]
    reused = []
    for seq_id, tail in (("a", [5, 6, 7, 8]), ("b", [5, 6, 9, 9]), ("c", [7, 7, 7, 7])):
        reused.append(kv.allocate_sequence(seq_id, [*stem, *tail]))
        kv.commit(seq_id, [*stem, *tail], 8)
    assert reused == [0, 6, 4]  # "b" copied the rows of [5, 6] from "a"'s block
    assert kv.block_table("a") == [0, 1] and kv.block_table("b") == [0, 2]
    assert copies == [(1, 2)]
    # Typed on from "b"'s text: block 0 is shared, and the first 3 rows of "b"'s second block (the
    # longest run in common among the three siblings) are copied into the new sequence's own block.
    assert kv.allocate_sequence("d", [*stem, 5, 6, 9, 4, 4]) == 7
    assert copies == [(1, 2), (2, kv.block_table("d")[1])]
    assert kv.pool.longest_child(b"no such parent", [5]) is None
    kv.check_invariants()
    for seq_id in "abcd":
        kv.free(seq_id)
    # Evicting a sibling forgets it as a child too.
    kv.pool.allocate(kv.pool.num_free)
    assert _cached(kv.pool) == 0
    kv.pool.check_invariants(Counter(range(12)))
