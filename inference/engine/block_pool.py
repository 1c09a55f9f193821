"""The pool of fixed-size KV blocks: reference counts, the prefix-hash index and the LRU free queue.

Plain Python, no torch: the block ids index the preallocated tensors that `ModelRunner` owns.

Invariants (checked by `BlockPool.check_invariants`):
* a block is in the free queue exactly when its reference count is 0;
* a block with a hash is the index entry for that hash, and every index entry points at such a block;
* a hashed block that was registered with its parent's hash and its tokens is listed among that
  parent's children (the blocks a partial match can copy from);
* the free queue orders blocks by eviction priority: blocks without a hash (nothing worth keeping)
  first, then cached blocks from least to most recently released.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Sequence

from inference.engine.errors import ResourceExhaustedError

# A block's identity in the prefix cache: a digest of its parent's hash and its own token ids, so equal
# hashes mean equal whole prefixes (not just equal blocks). 16 bytes of BLAKE2b make collisions
# negligible at any cache size.
BlockHash = bytes

ROOT_HASH: BlockHash = b""

# Copies one block's K/V (all layers) to another block: (source id, destination id).
CopyBlock = Callable[[int, int], None]


def hash_block(parent: BlockHash, token_ids: Sequence[int]) -> BlockHash:
    """The chained hash of a full block whose predecessor hashed to `parent` (ROOT_HASH for the first)."""
    digest = hashlib.blake2b(parent, digest_size=16)
    digest.update(array("q", token_ids).tobytes())
    return digest.digest()


class KVBlock:
    """Bookkeeping for one physical block."""

    __slots__ = ("block_hash", "block_id", "parent_hash", "ref_count", "token_ids")

    def __init__(self, block_id: int) -> None:
        self.block_id = block_id
        self.ref_count = 0
        self.block_hash: BlockHash | None = None
        # Set when registered as a child (see `register`): its parent's hash and its own tokens.
        self.parent_hash: BlockHash | None = None
        self.token_ids: tuple[int, ...] = ()


class BlockPool:
    """Allocates, shares, caches and evicts `num_blocks` blocks.

    `allocate` takes blocks from the front of the free queue, evicting their cached contents;
    `acquire` takes extra references to cached blocks (a prefix hit); `release` drops references and
    queues blocks whose count reaches 0 for reuse, most recently used last.
    """

    def __init__(
        self, num_blocks: int, enable_caching: bool = True, copy_block: CopyBlock | None = None
    ) -> None:
        if num_blocks < 1:
            raise ValueError(f"num_blocks must be >= 1, got {num_blocks}")
        self.num_blocks = num_blocks
        self.enable_caching = enable_caching
        self.blocks = [KVBlock(i) for i in range(num_blocks)]
        self._free: OrderedDict[int, None] = OrderedDict((i, None) for i in range(num_blocks))
        self._index: dict[BlockHash, int] = {}
        # parent hash -> the cached blocks that continue it (ids, oldest first), for partial matches.
        self._children: dict[BlockHash, dict[int, None]] = {}
        self._copy_block = copy_block
        self.evictions = 0

    @property
    def num_free(self) -> int:
        """Blocks that can be allocated now (cached ones included: they are evicted on demand)."""
        return len(self._free)

    @property
    def num_cached_idle(self) -> int:
        """Cached blocks no sequence holds (O(free blocks): for statistics, not for the hot path)."""
        return sum(1 for block_id in self._free if self.blocks[block_id].block_hash is not None)

    def lookup(self, block_hash: BlockHash) -> int | None:
        """The block holding the prefix that hashes to `block_hash`, if cached."""
        return self._index.get(block_hash) if self.enable_caching else None

    def allocate(self, n: int, after: int | None = None, keep: BlockHash | None = None) -> list[int]:
        """Take `n` blocks with reference count 1, evicting the least valuable cached blocks.

        With `after` (the last block of the sequence being extended) the block that follows it is
        taken when it is free, and so on, so that a sequence's table stays a run of consecutive
        blocks, which attention reads in place instead of gathering (see `_take_following`). `keep`
        is the hash the sequence's own next block will have, when the caller knows it.
        """
        if n > len(self._free):
            raise ResourceExhaustedError(
                f"KV cache full: need {n} free blocks, {len(self._free)} of {self.num_blocks} available"
            )
        taken: list[int] = []
        for _ in range(n):
            block_id = self._take_following(after, keep) if after is not None else None
            if block_id is None:
                block_id, _ = self._free.popitem(last=False)
            after, keep = block_id, None
            block = self.blocks[block_id]
            if block.block_hash is not None:
                self._forget(block)
                self.evictions += 1
            block.ref_count = 1
            taken.append(block_id)
        return taken

    def _take_following(self, after: int, keep: BlockHash | None) -> int | None:
        """The free block after `after`, removed from the free queue, or None.

        A cached block there continues `after`'s prefix differently from the sequence (a sibling
        branch, typically the text as it was before the user's last keystroke): its content moves to
        the block at the front of the free queue (copied by `copy_block`), so it stays cached. A
        block cached under `keep` holds the sequence's own next block and is left where it is.
        """
        following = after + 1
        if following not in self._free:
            return None
        cached = self.blocks[following].block_hash
        if cached is not None:
            if cached == keep or self._copy_block is None or len(self._free) < 2:
                return None
            self._move_cached(following)
        del self._free[following]
        return following

    def _move_cached(self, source: int) -> None:
        """Move an idle cached block's K/V and index entry to the front free block, evicting its content."""
        assert self._copy_block is not None
        target = next(block_id for block_id in self._free if block_id != source)
        moved, spare = self.blocks[source], self.blocks[target]
        if spare.block_hash is not None:
            self._forget(spare)
            self.evictions += 1
        self._copy_block(source, target)
        block_hash, parent, tokens = moved.block_hash, moved.parent_hash, moved.token_ids
        assert block_hash is not None
        self._forget(moved)
        self._remember(spare, block_hash, parent, tokens)
        self._free.move_to_end(target)

    def acquire(self, block_ids: Iterable[int]) -> None:
        """Add one reference to each block (blocks found by `lookup`, possibly unreferenced)."""
        for block_id in block_ids:
            block = self.blocks[block_id]
            if block.ref_count == 0:
                del self._free[block_id]
            block.ref_count += 1

    def release(self, block_ids: Iterable[int]) -> None:
        """Drop one reference from each block, in the order given.

        Callers pass a sequence's blocks tail first, so that when the pool needs room the ends of
        prefixes are evicted before their beginnings (a beginning is shared by more requests).
        """
        for block_id in block_ids:
            block = self.blocks[block_id]
            if block.ref_count <= 0:
                raise AssertionError(f"block {block_id} released with reference count {block.ref_count}")
            block.ref_count -= 1
            if block.ref_count == 0:
                self._free[block_id] = None
                if block.block_hash is None:
                    self._free.move_to_end(block_id, last=False)

    def register(
        self,
        block_id: int,
        block_hash: BlockHash,
        parent: BlockHash | None = None,
        token_ids: Sequence[int] = (),
    ) -> bool:
        """Index a full, computed block under its chained hash (and, given its parent's hash and its
        tokens, among that parent's children, where `longest_child` finds it).

        Returns False (and leaves the block unindexed) when caching is off or another block already
        holds the same prefix: two requests computed it at the same time, and the first one wins.
        """
        block = self.blocks[block_id]
        if not self.enable_caching or block.block_hash is not None or block_hash in self._index:
            return block.block_hash == block_hash
        self._remember(block, block_hash, parent, tuple(token_ids))
        return True

    def longest_child(self, parent: BlockHash, token_ids: Sequence[int]) -> tuple[int, BlockHash, int] | None:
        """The cached block after `parent` whose tokens start with the longest run of `token_ids`:
        (block id, its hash, tokens in common), or None when no child shares even the first token.

        Such a block holds the K/V of those first tokens at the same positions after the same
        prefix, typically the text as it was before the user's last keystroke.
        """
        best: tuple[int, BlockHash, int] | None = None
        if not self.enable_caching or not token_ids:
            return None
        for block_id in self._children.get(parent, ()):
            block = self.blocks[block_id]
            common = 0
            for ours, theirs in zip(token_ids, block.token_ids, strict=False):
                if ours != theirs:
                    break
                common += 1
            if common and block.block_hash is not None and (best is None or common > best[2]):
                best = (block_id, block.block_hash, common)
        return best

    def copy(self, source: int, destination: int) -> bool:
        """Copy one block's K/V to another (False, doing nothing, when the pool has no copy function)."""
        if self._copy_block is None:
            return False
        self._copy_block(source, destination)
        return True

    def _remember(
        self, block: KVBlock, block_hash: BlockHash, parent: BlockHash | None, tokens: tuple[int, ...]
    ) -> None:
        block.block_hash, block.parent_hash, block.token_ids = block_hash, parent, tokens
        self._index[block_hash] = block.block_id
        if parent is not None:
            self._children.setdefault(parent, {})[block.block_id] = None

    def _forget(self, block: KVBlock) -> None:
        """Drop a block's index entries (its content is about to be overwritten or moved)."""
        assert block.block_hash is not None
        del self._index[block.block_hash]
        if block.parent_hash is not None:
            siblings = self._children[block.parent_hash]
            del siblings[block.block_id]
            if not siblings:
                del self._children[block.parent_hash]
        block.block_hash, block.parent_hash, block.token_ids = None, None, ()

    def check_invariants(self, live_references: Counter[int]) -> None:
        """Raise AssertionError unless refcounts equal `live_references` and index and queue agree."""
        for block in self.blocks:
            live = live_references.get(block.block_id, 0)
            if block.ref_count != live:
                raise AssertionError(
                    f"block {block.block_id}: reference count {block.ref_count}, live references {live}"
                )
            if (block.ref_count == 0) != (block.block_id in self._free):
                raise AssertionError(f"block {block.block_id}: free queue membership wrong")
            if block.block_hash is not None and self._index.get(block.block_hash) != block.block_id:
                raise AssertionError(f"block {block.block_id}: hashed but not indexed (orphaned)")
        for block_hash, block_id in self._index.items():
            if self.blocks[block_id].block_hash != block_hash:
                raise AssertionError(f"index entry for block {block_id} does not match the block's hash")
        for parent, children in self._children.items():
            for block_id in children:
                child = self.blocks[block_id]
                if child.block_hash is None or child.parent_hash != parent:
                    raise AssertionError(f"block {block_id} is listed as a child it no longer is")
        unknown = set(live_references) - set(range(self.num_blocks))
        if unknown:
            raise AssertionError(f"references to blocks that do not exist: {sorted(unknown)}")
