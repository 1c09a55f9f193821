"""Per-sequence block tables on top of a `BlockPool`: prefix reuse, growth, rollback and release.

The boundary between the scheduler and the cache is narrow: a sequence id and token counts go in,
block ids and flat slots come out. No torch here.

Invariants:
* a sequence's block table covers at least its computed tokens; its first `len(hashes)` blocks are
  full, computed, and were registered under those chained hashes (or lost a race to an equal block);
* block tables only grow, except `truncate`, which drops tail blocks that were never registered
  (speculative tokens that were rejected);
* a sequence never writes into a block it shares: a prefix hit is whole blocks, and at least the last
  prompt token is always computed, so the first write lands in a fresh block. A partial hit (the
  first tokens of a cached sibling block, see `allocate_sequence`) is copied into the sequence's own
  fresh block, never written in place.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from inference.engine.block_pool import (
    ROOT_HASH,
    BlockHash,
    BlockPool,
    CopyBlock,
    hash_block,
)
from inference.engine.errors import ResourceExhaustedError


class KVCacheManager:
    """Owns the block tables of all live sequences of one model."""

    def __init__(
        self,
        num_blocks: int,
        block_size: int,
        enable_caching: bool = True,
        copy_block: CopyBlock | None = None,
    ) -> None:
        self.block_size = block_size
        self.pool = BlockPool(num_blocks, enable_caching, copy_block)
        self._tables: dict[str, list[int]] = {}
        self._hashes: dict[str, list[BlockHash]] = {}

    def blocks_for(self, num_tokens: int) -> int:
        """Blocks needed to hold `num_tokens` tokens."""
        return -(-num_tokens // self.block_size)

    def __contains__(self, seq_id: str) -> bool:
        return seq_id in self._tables

    def allocate_sequence(self, seq_id: str, token_ids: Sequence[int]) -> int:
        """Give a new sequence blocks for all of `token_ids`, reusing its longest cached prefix.

        The prefix is whole cached blocks and then, when the pool can copy blocks, the first tokens of
        a cached block that continues them differently (the text before the user's last keystroke):
        that block's K/V is copied into the sequence's next block, so after an edit only the tokens
        from the edit on are computed, as if the cache held every prefix token by token.

        Returns the number of reused tokens (less than len(token_ids): the last token is always
        computed, since its logits are needed). Raises ResourceExhaustedError, leaving the pool as it
        was, when the pool cannot hold the rest.
        """
        if seq_id in self._tables:
            raise ValueError(f"sequence {seq_id!r} already has blocks")
        max_hit_tokens = (len(token_ids) - 1) // self.block_size * self.block_size
        hit_blocks: list[int] = []
        hit_hashes: list[BlockHash] = []
        parent = ROOT_HASH
        for start in range(0, max_hit_tokens, self.block_size):
            block_hash = hash_block(parent, token_ids[start : start + self.block_size])
            block_id = self.pool.lookup(block_hash)
            if block_id is None:
                break
            hit_blocks.append(block_id)
            hit_hashes.append(block_hash)
            parent = block_hash
        reused = len(hit_blocks) * self.block_size
        partial = self.pool.longest_child(
            parent, token_ids[reused : min(reused + self.block_size, len(token_ids) - 1)]
        )
        self.pool.acquire(hit_blocks)
        try:
            new_blocks = self.pool.allocate(
                self.blocks_for(len(token_ids)) - len(hit_blocks),
                after=hit_blocks[-1] if hit_blocks else None,
                keep=self._next_block_hash(token_ids, len(hit_blocks), parent),
            )
        except ResourceExhaustedError:
            self.pool.release(reversed(hit_blocks))
            raise
        self._tables[seq_id] = hit_blocks + new_blocks
        self._hashes[seq_id] = hit_hashes
        if partial is not None:
            reused += self._copy_partial(*partial, destination=new_blocks[0])
        return reused

    def _copy_partial(self, source_id: int, source_hash: BlockHash, tokens: int, destination: int) -> int:
        """Put the first `tokens` K/V rows of the cached block (`source_id` before allocation, indexed
        under `source_hash`) into `destination`; returns how many tokens that reuses (0 if none).

        Allocation may have moved the source's content elsewhere (still indexed under its hash) when
        `destination` was the source itself; then the content is already in place.
        """
        if source_id == destination:
            return tokens
        now_at = self.pool.lookup(source_hash)
        if now_at is None or not self.pool.copy(now_at, destination):
            return 0
        return tokens

    def _next_block_hash(self, token_ids: Sequence[int], index: int, parent: BlockHash) -> BlockHash | None:
        """The hash block `index` will have once computed, if `token_ids` fill it."""
        start = index * self.block_size
        if start + self.block_size > len(token_ids):
            return None
        return hash_block(parent, token_ids[start : start + self.block_size])

    def ensure_capacity(self, seq_id: str, num_tokens: int) -> None:
        """Grow the block table to cover `num_tokens` tokens (raises ResourceExhaustedError if full)."""
        table = self._tables[seq_id]
        missing = self.blocks_for(num_tokens) - len(table)
        if missing > 0:
            table.extend(self.pool.allocate(missing, after=table[-1] if table else None))

    def block_table(self, seq_id: str) -> list[int]:
        """The sequence's blocks in order (the live list: do not modify)."""
        return self._tables[seq_id]

    def slots(self, seq_id: str, start: int, end: int) -> list[int]:
        """Flat slots (block_id * block_size + offset) of positions start..end-1."""
        table, size = self._tables[seq_id], self.block_size
        return [table[pos // size] * size + pos % size for pos in range(start, end)]

    def commit(self, seq_id: str, token_ids: Sequence[int], num_computed: int) -> None:
        """Register every block that is now full of computed tokens, so later requests can reuse it."""
        hashes, table = self._hashes[seq_id], self._tables[seq_id]
        num_full = num_computed // self.block_size
        if num_full <= len(hashes):
            return
        parent = hashes[-1] if hashes else ROOT_HASH
        for index in range(len(hashes), num_full):
            tokens = token_ids[index * self.block_size : (index + 1) * self.block_size]
            block_hash = hash_block(parent, tokens)
            self.pool.register(table[index], block_hash, parent, tokens)
            hashes.append(block_hash)
            parent = block_hash

    def truncate(self, seq_id: str, num_tokens: int) -> None:
        """Drop the blocks past those covering `num_tokens` tokens (speculative rollback)."""
        table, hashes = self._tables[seq_id], self._hashes[seq_id]
        if num_tokens < len(hashes) * self.block_size:
            raise ValueError(f"cannot truncate {seq_id!r} into its committed blocks")
        keep = self.blocks_for(num_tokens)
        if keep < len(table):
            self.pool.release(reversed(table[keep:]))
            del table[keep:]

    def free(self, seq_id: str, computed: Sequence[int] = ()) -> None:
        """Release all of a sequence's blocks; its registered blocks stay cached until evicted.

        `computed`: the tokens whose K/V the sequence holds (its first positions). Their full blocks
        are registered as `commit` does, and the rows of a partly filled last block stay cached as a
        partial block (no sequence writes into it any more), so the next request that continues them
        (a completion after a prefill, a keystroke after an abandoned suggestion) copies them.
        """
        if computed and seq_id in self._tables:
            self.commit(seq_id, computed, len(computed))
            hashes, blocks = self._hashes[seq_id], self._tables[seq_id]
            start = len(hashes) * self.block_size
            if start < len(computed) and len(hashes) < len(blocks):
                parent = hashes[-1] if hashes else ROOT_HASH
                tail = computed[start:]
                self.pool.register(blocks[len(hashes)], hash_block(parent, tail), parent, tail)
        table = self._tables.pop(seq_id, None)
        self._hashes.pop(seq_id, None)
        if table is not None:
            self.pool.release(reversed(table))

    def live_sequences(self) -> list[str]:
        """Ids of the sequences holding blocks."""
        return list(self._tables)

    def check_invariants(self) -> None:
        """Raise AssertionError on a leaked, double-freed or orphaned block, or a wrong refcount."""
        references: Counter[int] = Counter()
        for seq_id, table in self._tables.items():
            references.update(table)
            hashes = self._hashes[seq_id]
            if len(hashes) > len(table):
                raise AssertionError(f"sequence {seq_id!r} has more committed hashes than blocks")
            for block_id, block_hash in zip(table, hashes, strict=False):
                if self.pool.blocks[block_id].block_hash not in (block_hash, None):
                    raise AssertionError(f"sequence {seq_id!r}: block {block_id} holds another prefix")
            if len(set(table)) != len(table):
                raise AssertionError(f"sequence {seq_id!r} lists a block twice")
        self.pool.check_invariants(references)
