"""`CausalLM`: the decoder-only transformer shared by the Llama family, over the paged KV pool.

An architecture module subclasses `CausalLM` and says only how it differs (biases, q/k norm); the
module tree mirrors the Hugging Face checkpoints (`model.embed_tokens`, `model.layers.N.self_attn`,
`model.layers.N.mlp`, `model.norm`, `lm_head`) so their state dicts load without renaming.
"""

from __future__ import annotations

import threading

from collections.abc import Callable

import torch
from torch import nn

from inference.layers.attention import ALL_ROWS, KERNEL_MAX_TOKENS, Attention
from inference.layers.cpu_kernels import KernelBuildError
from inference.layers.gguf_linear import BlockMatrix, GGUFEmbedding, GGUFLinear, repack_in_background
from inference.layers.q8_0_embedding import Q8_0Embedding, exact_q8_0_head
from inference.models.decoder_layer import DecoderLayer, FusedDecoderStep
from inference.layers.paged_kv import AttentionMetadata, KVCache
from inference.layers.linear import KERNEL_FORMS, ROW_EXACT_FORMS, pack_linears
from inference.layers.mlp import SwiGLU
from inference.layers.norm import RMSNorm
from inference.layers.rotary import RotaryEmbedding
from inference.model_config import ModelConfig


class ForwardInterrupted(Exception):
    """A forward pass stopped between two layers because its caller asked it to (`interrupt`). The K/V
    it wrote lie in slots past what its sequences have computed; the pass is redone later."""


class DecoderStack(nn.Module):
    """Embeddings, layers and final norm: the `model.` prefix of a checkpoint."""

    def __init__(
        self, config: ModelConfig, qkv_bias: bool, o_bias: bool, mlp_bias: bool, sandwich_norms: bool = False
    ) -> None:
        super().__init__()
        # Initialised here only off the meta device: `normal_` on meta tensors imports torch's compiler
        # stack (3.5 s of a GGUF's load on this CPU), and a model built there gets the file's weights.
        weight = torch.empty(config.vocab_size, config.hidden_size)
        if weight.device.type != "meta":
            nn.init.normal_(weight)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size, _weight=weight)
        self.layers = nn.ModuleList(
            DecoderLayer(config, i, qkv_bias, o_bias, mlp_bias, sandwich_norms) for i in range(config.num_layers)
        )
        self.norm = RMSNorm(config.hidden_size, config.rms_norm_eps)


class CausalLM(nn.Module):
    """A decoder-only language model that reads and writes a paged `KVCache`.

    Subclasses set the bias flags through `attention_biases`, Gemma's extra norms through
    `sandwich_norms` and its embedding scale through `embedding_scale`; everything else is shared.
    Invariant: `forward` is a pure function of the token ids, their positions and the K/V already
    stored for positions before them, whatever blocks hold that K/V and however calls are split.
    """

    model_type = "base"

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        qkv_bias, o_bias = self.attention_biases(config)
        mlp_bias = self.mlp_bias(config)
        self.model = DecoderStack(config, qkv_bias, o_bias, mlp_bias, self.sandwich_norms())
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.rotary: RotaryEmbedding
        # Sliding-window layers with a RoPE base of their own (Gemma 3); None: every layer uses `rotary`.
        self.local_rotary: RotaryEmbedding | None = None
        self.init_rotary(torch.get_default_device())
        # The layers that attend over a sliding window (they take `local_rotary` where there is one).
        windows = config.layer_sliding_windows
        self.local_layers = frozenset(i for i in range(len(windows)) if windows[i] is not None)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight
        # Counted once here (a tied head shares the embeddings): packing copies and repacks weights.
        self.parameter_count = sum(p.numel() for p in self.parameters())
        # Repacking a GGUF file's blocks for 8-bit activations, where `place_blocks` started it.
        self.repacking: threading.Thread | None = None
        # Whether each row's values come out the same whatever the other rows of a pass (the
        # `ROW_EXACT_FORMS`, set by `pack_weights`): `hidden_states` may then compute only some rows.
        self.rows_alone = False

    def place_blocks(self, blocks: dict[str, BlockMatrix], int8_activations: bool = False) -> None:
        """Serve the weights `blocks` names (`<module>.weight`: a linear or the embeddings) from a GGUF
        file's own blocks: each such module becomes its block form, its bias kept; a tied output
        head reads the embeddings' blocks. Before `pack_weights`, which packs what is left.
        int8_activations: the linears quantize x to 8 bits (the native_q8 form); those whose blocks
        repack are repacked on a thread started here (`repacking`), their outputs the same meanwhile."""
        for name, matrix in blocks.items():
            path, _, leaf = name.rpartition(".")
            parent_path, _, attribute = path.rpartition(".")
            parent = self.get_submodule(parent_path)
            module = getattr(parent, attribute)
            if leaf != "weight" or not isinstance(module, (nn.Linear, nn.Embedding)):
                raise ValueError(f"{name} is not a linear's or an embedding's weight")
            if tuple(module.weight.shape) != matrix.shape:
                raise ValueError(f"{name} has shape {matrix.shape}, the model expects {tuple(module.weight.shape)}")
            if isinstance(module, nn.Embedding):
                setattr(parent, attribute, GGUFEmbedding(matrix))
            else:
                setattr(parent, attribute, GGUFLinear(matrix, module.bias, int8_activations))
        embeddings = blocks.get("model.embed_tokens.weight")
        if self.config.tie_word_embeddings and embeddings is not None:
            head = GGUFLinear(embeddings, int8_activations=int8_activations)
            self.lm_head = head  # type: ignore[assignment]
            if head.will_repack:  # only the repacked bytes will be kept: the embedding reads the head's
                setattr(self.model, "embed_tokens", GGUFEmbedding(head))  # noqa: B010
        # The largest first (a tied head: most of a small model's bytes, read every token): its file pages
        # are repacked before decoding has touched them all.
        pending = sorted(
            (m for m in self.modules() if isinstance(m, GGUFLinear) and m.will_repack),
            key=lambda m: m.blocks.numel(),
            reverse=True,
        )
        self.repacking = repack_in_background(pending) if pending else None

    def pack_weights(self, weights: str) -> None:
        """Store the projections for CPU inference in `weights` form (see `inference.layers.linear`):
        q/k/v and gate/up fused into one product each, then every linear packed (lm_head included)."""
        for module in list(self.modules()):
            if isinstance(module, (Attention, SwiGLU)):
                module.fuse_projections()
        # A head already placed in the file's blocks (`place_blocks`) has no float weight to share.
        tied = self.lm_head.weight if self.config.tie_word_embeddings and isinstance(self.lm_head, nn.Linear) else None
        pack_linears(self, weights)
        if weights == "float16" and tied is not None:
            self._share_q8_0_head(tied)
        self.rows_alone = weights in ROW_EXACT_FORMS
        if weights in KERNEL_FORMS:
            for module in self.modules():
                if isinstance(module, (RMSNorm, Attention)):
                    module.kernel = True
                if isinstance(module, Attention) and weights in ROW_EXACT_FORMS:
                    module.kernel_rows = ALL_ROWS
            for layer in self.model.layers:
                if isinstance(layer, DecoderLayer):
                    layer.fused = FusedDecoderStep.of(layer)

    def _share_q8_0_head(self, weight: torch.Tensor) -> None:
        """Tied embeddings that Q8_0 holds exactly (a GGUF's Q8_0 `token_embd`): the head multiplies
        by those blocks instead of float16 copies (the file's own weights, about half the bytes a
        token), and the embedding reads its rows from them (`inference.layers.q8_0_embedding`)."""
        try:
            head = exact_q8_0_head(weight)
        except KernelBuildError:
            return  # no compiler here: the float16 head stays
        if head is not None:
            # Swapped as pack_linears swaps modules: the attributes keep their checkpoint names.
            setattr(self, "lm_head", head)  # noqa: B010
            setattr(self.model, "embed_tokens", Q8_0Embedding(head))  # noqa: B010

    def init_rotary(self, device: torch.device | str) -> None:
        """(Re)build the rotary tables on `device` (they are not weights: a model built on the meta
        device gets them here once loaded). Computed on the CPU: on the meta device the same arithmetic
        imports torch's compiler stack."""
        with torch.device("cpu"):
            self.rotary = RotaryEmbedding(self.config)
            if self.config.local_rope_theta is not None:
                self.local_rotary = RotaryEmbedding(self.config, local=True)
        self.rotary.to(device)
        if self.local_rotary is not None:
            self.local_rotary.to(device)

    # Multiplies the token embeddings before the first layer (Gemma: the square root of hidden_size).
    embedding_scale: float | None = None

    @classmethod
    def sandwich_norms(cls) -> bool:
        """Whether each layer norms its attention and MLP outputs too (`DecoderLayer`)."""
        return False

    @classmethod
    def checkpoint_state(cls, state: dict[str, torch.Tensor]) -> None:
        """Turn a Hugging Face checkpoint's state into the values this module holds, in place (the
        identity here; GGUF files already hold them)."""

    @classmethod
    def attention_biases(cls, config: ModelConfig) -> tuple[bool, bool]:
        """(bias on q/k/v projections, bias on the output projection)."""
        return config.attention_bias, config.attention_bias

    @classmethod
    def mlp_bias(cls, config: ModelConfig) -> bool:
        """Whether the MLP projections carry biases."""
        return False

    def forward(
        self, input_ids: torch.Tensor, positions: torch.Tensor, kv: KVCache, meta: AttentionMetadata
    ) -> torch.Tensor:
        """input_ids, positions: (T,) int64. Writes the new K/V into kv at meta.slot_mapping, attends over
        the sequence's blocks, returns float32 logits (T, vocab_size)."""
        return self.lm_head(self.hidden_states(input_ids, positions, kv, meta)).float()

    def hidden_states(
        self,
        input_ids: torch.Tensor,
        positions: torch.Tensor,
        kv: KVCache,
        meta: AttentionMetadata,
        interrupt: Callable[[], bool] | None = None,
        rows: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Final normed hidden states (T, hidden_size), for callers that need only some logits; with
        `rows` (int64 indices) only those rows (R, hidden_size). Where each row's values do not depend on
        the other rows of the pass (`rows_alone`) the last layer computes only `rows` past its attention
        (every row's K/V is still written), as llama.cpp does: a prompt's other rows are read by nothing
        after it. Elsewhere every row is computed and `rows` picked at the end (a product's rounding may
        depend on how many rows it has). Either way a row's values are those of the whole pass.

        `interrupt` is asked before every layer but the first; when it answers True the pass stops
        with `ForwardInterrupted` (a background pass giving way to a user's request within a layer)."""
        hidden = self.model.embed_tokens(input_ids)  # (T, hidden)
        if self.embedding_scale is not None:
            # Rounded to the embeddings' dtype first, as the reference implementations do.
            hidden = hidden * torch.tensor(self.embedding_scale, dtype=hidden.dtype, device=hidden.device)
        rotation = self.rotary(positions)  # cos, sin: (T, D) each
        local_rotation = rotation if self.local_rotary is None else self.local_rotary(positions)
        last = len(self.model.layers) - 1 if rows is not None and self.rows_alone else -1
        for index, (layer, k_cache, v_cache) in enumerate(zip(self.model.layers, kv.k, kv.v, strict=True)):
            if index and interrupt is not None and interrupt():
                raise ForwardInterrupted(f"interrupted before layer {index}")
            cos, sin = local_rotation if index in self.local_layers else rotation
            if index == last:
                hidden = layer(hidden, cos, sin, k_cache, v_cache, meta, rows)
            else:
                hidden = layer(hidden, cos, sin, k_cache, v_cache, meta)
        hidden = self.model.norm(hidden)
        return hidden if rows is None or last >= 0 else hidden[rows]
