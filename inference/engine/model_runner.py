"""The one place that holds tensors: a model, its preallocated KV pool, and forward calls.

The scheduler and cache manager above it deal in token ids, positions and block ids (plain Python);
this module turns those into `AttentionMetadata` and runs the model under `torch.inference_mode`.
A call feeds the new tokens of one sequence (`forward`) or of several (`forward_batch`: their rows
are concatenated, so every linear layer runs once for all of them, while attention reads each
sequence's own blocks).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import torch
from torch import nn

from inference.config import EngineConfig
from inference.engine.kv_pool_size import PoolSize, default_pool, pool_of_megabytes, pool_of_tokens
from inference.layers.paged_kv import AttentionMetadata, KVCache, SequenceSpan
from inference.loading import LoadedModel
from inference.model_config import ModelConfig

log = logging.getLogger(__name__)


def available_memory(device: torch.device) -> int | None:
    """Bytes a new KV pool may still take on `device`: the GPU's free memory, or the system's
    available memory (Linux's MemAvailable); None where neither can be read."""
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        return int(free)
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def pool_size(
    config: ModelConfig,
    block_size: int,
    dtype: torch.dtype,
    *,
    blocks: int | None = None,
    tokens: int | None = None,
    megabytes: float | None = None,
    available_bytes: int | None = None,
) -> PoolSize:
    """The KV pool of a model of `config` storing `dtype`: `blocks`, `tokens` or `megabytes` when
    given (in that order), else the default sized by the model (`inference/engine/kv_pool_size.py`)."""
    per_token = KVCache.bytes_per_block(config, 1, dtype)
    if blocks is not None:
        return PoolSize(blocks, block_size, per_token, "num_kv_blocks")
    if tokens is not None:
        return pool_of_tokens(tokens, block_size, per_token)
    if megabytes is not None:
        return pool_of_megabytes(megabytes, block_size, per_token)
    return default_pool(config.max_position_embeddings, block_size, per_token, available_bytes)


class PagedModel(Protocol):
    """What the runner needs of a model (`CausalLM` has it): its config, the final hidden states of
    fed tokens over a paged KV pool, and the output head applied to the rows it samples from."""

    @property
    def config(self) -> ModelConfig:
        """The model's shapes and limits."""
        ...

    @property
    def lm_head(self) -> nn.Module:
        """Hidden states (T, hidden_size) -> logits (T, vocab_size)."""
        ...

    def hidden_states(
        self,
        input_ids: torch.Tensor,
        positions: torch.Tensor,
        kv: KVCache,
        meta: AttentionMetadata,
        interrupt: Callable[[], bool] | None = None,
        rows: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """input_ids, positions: (T,) int64 -> (T, hidden_size), or only `rows` (int64 indices) of them;
        writes the new K/V into `kv`. Raises `ForwardInterrupted` between layers once `interrupt` answers
        True."""
        ...


@dataclass
class ForwardRows:
    """One sequence's part of a forward call: tokens fed at positions start_pos.. whose K/V land in
    `slots`; `block_table` covers start_pos + len(token_ids); logits of the last `num_logits` rows
    come back (0: none, for a prompt chunk that is not the last)."""

    token_ids: Sequence[int]
    start_pos: int
    block_table: Sequence[int]
    slots: Sequence[int]
    num_logits: int = 1

    def check(self) -> None:
        """Raise ValueError when the counts do not fit together."""
        num_new = len(self.token_ids)
        if not 0 <= self.num_logits <= num_new or num_new < 1 or len(self.slots) != num_new:
            raise ValueError(
                f"bad forward call: {num_new} tokens, {len(self.slots)} slots, {self.num_logits} logits"
            )


class ModelRunner:
    """Runs forward passes of one model over its own paged KV pool."""

    def __init__(
        self,
        model: PagedModel,
        num_blocks: int,
        block_size: int,
        device: torch.device,
        dtype: torch.dtype,
        sizing: PoolSize | None = None,
    ) -> None:
        self.model = model
        self.sizing = sizing
        """How the pool's size was chosen (None: by the caller's `num_blocks`)."""
        self.config = model.config
        self.device = device
        self.dtype = dtype
        self.block_size = block_size
        self.num_blocks = num_blocks
        self.kv = KVCache.allocate(model.config, num_blocks, block_size, dtype, device)

    def copy_block(self, source: int, destination: int) -> None:
        """Copy one block's K and V, in every layer, to another block of the pool."""
        with torch.inference_mode():
            for cache in (*self.kv.k, *self.kv.v):
                cache[:, destination].copy_(cache[:, source])  # (KvH, block_size, D)

    def forward(
        self,
        token_ids: Sequence[int],
        start_pos: int,
        block_table: Sequence[int],
        slots: Sequence[int],
        num_logits: int = 1,
    ) -> torch.Tensor:
        """Feed tokens at positions start_pos.. ; returns float32 logits (num_logits, V) of the last rows.

        The K/V of the fed tokens land in `slots`; `block_table` must cover start_pos + len(token_ids).
        """
        if num_logits < 1:
            raise ValueError(f"bad forward call: {num_logits} logits")
        return self.forward_batch([ForwardRows(token_ids, start_pos, block_table, slots, num_logits)])[0]

    def forward_batch(
        self, parts: Sequence[ForwardRows], interrupt: Callable[[], bool] | None = None
    ) -> list[torch.Tensor]:
        """One forward pass over the new tokens of several sequences; float32 logits (num_logits, V)
        of each part, in order. Each part reads and writes only its own sequence's K/V. The pass
        raises `ForwardInterrupted` between layers once `interrupt` answers True.
        """
        ids: list[int] = []
        positions: list[int] = []
        slots: list[int] = []
        spans: list[SequenceSpan] = []
        sampled: list[int] = []  # rows that go through lm_head
        device = self.device
        for part in parts:
            part.check()
            row, num_new = len(ids), len(part.token_ids)
            ids.extend(part.token_ids)
            positions.extend(range(part.start_pos, part.start_pos + num_new))
            slots.extend(part.slots)
            table = torch.tensor(part.block_table, dtype=torch.int64, device=device)
            spans.append(SequenceSpan(num_new, table, part.start_pos + num_new))
            sampled.extend(range(row + num_new - part.num_logits, row + num_new))
        if not parts:
            return []
        slot_mapping = torch.tensor(slots, dtype=torch.int64, device=device)
        meta = AttentionMetadata.batched(slot_mapping, spans, self.block_size)
        with torch.inference_mode():
            input_ids = torch.tensor(ids, dtype=torch.int64, device=device)
            # Only the rows we sample from go through the last layer past its attention and through
            # lm_head: with a 150k vocabulary, projecting a whole prompt would cost more than the
            # transformer itself, and a prompt's last MLP is a layer's worth of products for one row.
            partial = 0 < len(sampled) < len(ids)
            rows = torch.tensor(sampled, dtype=torch.int64, device=device) if partial else None
            position_ids = torch.tensor(positions, dtype=torch.int64, device=device)
            hidden = self.model.hidden_states(
                input_ids, position_ids, self.kv, meta, interrupt, rows
            )  # (L, hidden) with rows, else (T, hidden)
            logits = self.model.lm_head(hidden).float() if sampled else hidden.new_empty(0, 0)  # (L, V)
        return list(logits.split([part.num_logits for part in parts]))


def runners_for(
    target: LoadedModel, draft: LoadedModel | None, config: EngineConfig
) -> tuple[ModelRunner, ModelRunner | None]:
    """Runners (with KV pools sized from config) for a target and an optional draft that must share
    its tokenizer and device (ValueError otherwise)."""
    if draft is not None and (
        draft.tokenizer.vocab_size != target.tokenizer.vocab_size or draft.device != target.device
    ):
        raise ValueError(
            f"draft model {draft.name} cannot serve {target.name}: it must share the tokenizer "
            f"(vocab {draft.tokenizer.vocab_size} vs {target.tokenizer.vocab_size}) and the device"
        )
    size = config.block_size
    target_pool = pool_size(
        target.config,
        size,
        target.dtype,
        blocks=config.num_kv_blocks,
        tokens=config.kv_tokens,
        megabytes=config.kv_cache_mb,
        available_bytes=available_memory(target.device),
    )
    if target_pool.short_of_context:
        log.warning(
            "the KV pool holds %d tokens, %d fewer than %s's context of %d: memory allows no more, so the "
            "daemon serves a context of that many tokens (free memory, or choose with --kv-tokens)",
            target_pool.tokens,
            target_pool.short_of_context,
            target.name,
            target.config.max_position_embeddings,
        )
    target_runner = ModelRunner(
        target.model, target_pool.blocks, size, target.device, target.dtype, target_pool
    )
    if draft is None:
        return target_runner, None
    # The draft proposes only while its pool holds the sequence: as many tokens as the target's pool
    # unless told (a draft is the smaller model, so its pool is the smaller one).
    draft_pool = pool_size(
        draft.config,
        size,
        draft.dtype,
        blocks=config.draft_num_kv_blocks,
        tokens=None if config.draft_kv_cache_mb is not None else target_pool.tokens,
        megabytes=config.draft_kv_cache_mb,
    )
    return target_runner, ModelRunner(
        draft.model, draft_pool.blocks, size, draft.device, draft.dtype, draft_pool
    )
