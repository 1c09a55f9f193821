"""The paged KV layout: the preallocated pool of fixed-size blocks, where a forward call's new tokens
live in it (`AttentionMetadata`), and reading and writing a sequence's K/V.

KV lives in a preallocated pool of fixed-size blocks per layer, head-major: each KV head's blocks are
contiguous, so a run of consecutive blocks is one contiguous (S, D) matrix per head, which is the
layout the attention kernels read fastest. A sequence owns an ordered list of blocks (its block
table). A forward call (of one sequence, or of several sequences' rows concatenated) writes its new
tokens' K/V into their slots; attention then reads, per sequence, that sequence's blocks in order
(in place when they are consecutive, gathered otherwise), so the result does not depend on which
physical blocks hold the sequence, nor on how the sequence was split into calls.
"""

from __future__ import annotations

import math
import mmap
from dataclasses import dataclass, field

import torch

from inference.model_config import ModelConfig


def _consecutive_start(block_table: torch.Tensor) -> int | None:
    """First block id when the table is a run of consecutive blocks (checked on the CPU only: on a
    GPU the check would cost a device sync per layer), else None."""
    if block_table.device.type != "cpu" or block_table.numel() == 0:
        return None
    first = int(block_table[0])
    if block_table.numel() > 1 and not bool((block_table.diff() == 1).all()):
        return None
    return first


@dataclass
class SequenceSpan:
    """One sequence's rows of a forward call.

    rows: how many consecutive rows of the call (its new tokens) belong to the sequence.
    block_table: (n_blocks,) int64, the sequence's blocks in order; they cover context_len tokens.
    context_len: tokens in the sequence after this call (cached + new); its new tokens sit at
    positions context_len - rows .. context_len - 1 and attend causally to everything before them.
    """

    rows: int
    block_table: torch.Tensor
    context_len: int
    # First block id when block_table is a run of consecutive blocks on the CPU (read in place
    # instead of gathered); computed once here rather than in every layer.
    consecutive_from: int | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.consecutive_from = _consecutive_start(self.block_table)


class AttentionMetadata:
    """Where one forward call's T new tokens live in the paged KV pool: the tokens of ONE sequence
    (`AttentionMetadata(slots, block_table, context_len, block_size)`), or the rows of several
    sequences one after another (`AttentionMetadata.batched`, "varlen": the linear layers see all rows
    at once, attention reads each sequence's own blocks).

    slot_mapping: (T,) int64, flat slot = block_id * block_size + offset where each new token's K/V
    is written (rewriting a slot is allowed: speculative rollback just writes again).
    spans: the sequences, in row order; their rows add up to T.
    """

    def __init__(
        self, slot_mapping: torch.Tensor, block_table: torch.Tensor, context_len: int, block_size: int
    ) -> None:
        self.slot_mapping = slot_mapping
        self.block_size = block_size
        self.spans = [SequenceSpan(slot_mapping.numel(), block_table, context_len)]

    @classmethod
    def batched(
        cls, slot_mapping: torch.Tensor, spans: list[SequenceSpan], block_size: int
    ) -> AttentionMetadata:
        """Several sequences' rows in one call (`spans` in row order, rows adding up to T)."""
        if not spans or sum(span.rows for span in spans) != slot_mapping.numel():
            raise ValueError("the spans' rows must add up to the slots")
        meta = cls.__new__(cls)
        meta.slot_mapping, meta.block_size, meta.spans = slot_mapping, block_size, spans
        return meta

    @property
    def block_table(self) -> torch.Tensor:
        """The block table of a one-sequence call."""
        return self._single.block_table

    @property
    def context_len(self) -> int:
        """The context length of a one-sequence call."""
        return self._single.context_len

    @property
    def consecutive_from(self) -> int | None:
        """The first block of a one-sequence call whose blocks are consecutive (else None)."""
        return self._single.consecutive_from

    @property
    def _single(self) -> SequenceSpan:
        if len(self.spans) != 1:
            raise ValueError(f"a call of {len(self.spans)} sequences has no single block table")
        return self.spans[0]


def _zeros(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device | str) -> torch.Tensor:
    """Zeros of `shape`. On a CPU they lie in an anonymous memory map, whose pages the system provides
    as they are first written: a pool sized for the whole context takes memory only as it fills
    (`torch.zeros` would write, and so take, every page at start)."""
    if torch.device(device).type != "cpu":
        return torch.zeros(shape, dtype=dtype, device=device)
    nbytes = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
    return torch.frombuffer(mmap.mmap(-1, nbytes), dtype=dtype).view(shape)


@dataclass
class KVCache:
    """The preallocated pool: per layer, K and V of shape (n_kv_heads, num_blocks, block_size, head_dim)."""

    k: list[torch.Tensor]
    v: list[torch.Tensor]

    @classmethod
    def allocate(
        cls,
        config: ModelConfig,
        num_blocks: int,
        block_size: int,
        dtype: torch.dtype,
        device: torch.device | str,
    ) -> KVCache:
        """Zero-filled pool of `num_blocks` blocks of `block_size` tokens for every layer."""
        shape = (config.num_kv_heads, num_blocks, block_size, config.head_dim)
        k = [_zeros(shape, dtype, device) for _ in range(config.num_layers)]
        v = [_zeros(shape, dtype, device) for _ in range(config.num_layers)]
        return cls(k=k, v=v)

    @staticmethod
    def bytes_per_block(config: ModelConfig, block_size: int, dtype: torch.dtype) -> int:
        """Bytes one block takes across all layers, K and V together."""
        elem = torch.empty((), dtype=dtype).element_size()
        return 2 * config.num_layers * block_size * config.num_kv_heads * config.head_dim * elem

    @property
    def num_blocks(self) -> int:
        """Blocks in the pool."""
        return self.k[0].shape[1]

    @property
    def block_size(self) -> int:
        """Tokens per block."""
        return self.k[0].shape[2]


def write_kv(
    k_cache: torch.Tensor, v_cache: torch.Tensor, k: torch.Tensor, v: torch.Tensor, slots: torch.Tensor
) -> None:
    """Store new K/V (T, KvH, D) into the pool at flat `slots`."""
    kv_heads, head_dim = k_cache.shape[0], k_cache.shape[3]
    k_cache.view(kv_heads, -1, head_dim).index_copy_(1, slots, k.transpose(0, 1).to(k_cache.dtype))
    v_cache.view(kv_heads, -1, head_dim).index_copy_(1, slots, v.transpose(0, 1).to(v_cache.dtype))


def gather_kv(
    cache: torch.Tensor, block_table: torch.Tensor, context_len: int, consecutive_from: int | None = None
) -> torch.Tensor:
    """The sequence's first `context_len` K or V rows of every head, in order: (KvH, S, D).

    With `consecutive_from` (the table is that block and the ones after it) the blocks are read in
    place (a view, contiguous per head); otherwise they are gathered (a copy).
    """
    start = consecutive_from
    if start is not None:
        blocks = cache[:, start : start + block_table.numel()]  # (KvH, n_blocks, block_size, D), a view
    else:
        blocks = cache.index_select(1, block_table)  # (KvH, n_blocks, block_size, D)
    return blocks.flatten(1, 2)[:, :context_len]  # (KvH, S, D)
