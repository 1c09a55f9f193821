"""The one place that holds tensors: a model, its preallocated KV pool, and one-sequence forward calls.

The scheduler and cache manager above it deal in token ids, positions and block ids (plain Python);
this module turns those into `AttentionMetadata` and runs the model under `torch.inference_mode`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import torch
from torch import nn

from inference.config import EngineConfig
from inference.layers.attention import AttentionMetadata, KVCache
from inference.loading import LoadedModel
from inference.models.base import CausalLM
from inference.models.config import ModelConfig


def blocks_for_memory(model: CausalLM, block_size: int, dtype: torch.dtype, megabytes: float) -> int:
    """How many KV blocks fit in `megabytes` (at least 1)."""
    per_block = KVCache.bytes_per_block(model.config, block_size, dtype)
    return max(1, int(megabytes * 1024 * 1024) // per_block)


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
        self, input_ids: torch.Tensor, positions: torch.Tensor, kv: KVCache, meta: AttentionMetadata
    ) -> torch.Tensor:
        """input_ids, positions: (T,) int64 -> (T, hidden_size); writes the new K/V into `kv`."""
        ...


class ModelRunner:
    """Runs forward passes of one model over its own paged KV pool."""

    def __init__(
        self, model: PagedModel, num_blocks: int, block_size: int, device: torch.device, dtype: torch.dtype
    ) -> None:
        self.model = model
        self.config = model.config
        self.device = device
        self.dtype = dtype
        self.block_size = block_size
        self.num_blocks = num_blocks
        self.kv = KVCache.allocate(model.config, num_blocks, block_size, dtype, device)

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
        num_new = len(token_ids)
        if not 1 <= num_logits <= num_new or len(slots) != num_new:
            raise ValueError(f"bad forward call: {num_new} tokens, {len(slots)} slots, {num_logits} logits")
        device = self.device
        meta = AttentionMetadata(
            slot_mapping=torch.tensor(slots, dtype=torch.int64, device=device),
            block_table=torch.tensor(block_table, dtype=torch.int64, device=device),
            context_len=start_pos + num_new,
            block_size=self.block_size,
        )
        input_ids = torch.tensor(token_ids, dtype=torch.int64, device=device)
        positions = torch.arange(start_pos, start_pos + num_new, dtype=torch.int64, device=device)
        with torch.inference_mode():
            # Only the rows we sample from go through lm_head: with a 150k vocabulary, projecting a
            # whole prompt would cost more than the transformer itself.
            hidden = self.model.hidden_states(input_ids, positions, self.kv, meta)  # (T, hidden)
            return self.model.lm_head(hidden[num_new - num_logits :]).float()  # (num_logits, V)


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
    blocks = config.num_kv_blocks or blocks_for_memory(target.model, size, target.dtype, config.kv_cache_mb)
    target_runner = ModelRunner(target.model, blocks, size, target.device, target.dtype)
    if draft is None:
        return target_runner, None
    draft_blocks = config.draft_num_kv_blocks or blocks_for_memory(
        draft.model, size, draft.dtype, config.draft_kv_cache_mb
    )
    return target_runner, ModelRunner(draft.model, draft_blocks, size, draft.device, draft.dtype)
