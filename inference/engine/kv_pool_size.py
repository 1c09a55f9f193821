"""How many tokens the paged KV pool holds: sized by the model and the work unless a flag says.

Plain arithmetic, no torch: the model runner passes in what one token costs (its layers, KV heads,
head size and element size) and the memory it may use, and allocates what this module decides.

The default pool holds one request as long as the model's context window (the daemon's own prompt
budget lets a prompt and its reply use the whole context: `inference/reply_limits.py`) plus room for
`DEFAULT_SESSIONS` more sessions of `SESSION_TOKENS` each, so a long refactor or an OpenAI client
filling the context does not evict the cached prompt of the document being typed in (completions
and next-edit predictions reuse it at every keystroke). It is bounded by memory: at most
`MEMORY_SHARE` of what is available once the model is loaded. When that cannot hold even the
context, the pool is what memory allows and `PoolSize.short_of_context` says by how much (the
daemon warns and serves a context of the pool's tokens, so its prompt budgets still fit the pool).
"""

from __future__ import annotations

from dataclasses import dataclass

SESSION_TOKENS = 4096
"""Tokens of one typical session's request: the language server's default completion prompt (prefix
1,536 + suffix 512 + retrieved context 1,024 tokens, its template and 64 tokens of reply: about 3,200)
with room for the token estimate's error; a next-edit prompt (history 800, context 512, the region) is
smaller. `tests/inference/engine/test_kv_pool_size.py` checks the language server's defaults fit."""
DEFAULT_SESSIONS = 2
"""Sessions kept beside the longest request: the document being typed in and one more (a next-edit
prompt, or a second editor), whose cached prefixes then survive a full-context request."""
MEMORY_SHARE = 0.75
"""Most of the available memory the default pool may take: the rest is left to the runtime's working
memory (a 1,024-token prefill's activations, the logits), the language server and the machine."""


@dataclass(frozen=True)
class PoolSize:
    """A pool of `blocks` blocks of `block_size` tokens, and why it has that size."""

    blocks: int
    block_size: int
    bytes_per_token: int
    reason: str
    """What chose the size, for the start-up line: ``sized by the model``, ``--kv-tokens`` …"""
    short_of_context: int = 0
    """Tokens of the model's context that the pool cannot hold (memory-bound default pools only)."""

    @property
    def tokens(self) -> int:
        """Tokens the pool holds."""
        return self.blocks * self.block_size

    @property
    def bytes(self) -> int:
        """Memory of the pool, K and V of every layer."""
        return self.tokens * self.bytes_per_token


def blocks_for_tokens(tokens: int, block_size: int) -> int:
    """Blocks that hold `tokens` tokens (at least 1)."""
    return max(1, -(-tokens // block_size))


def wanted_tokens(context_length: int) -> int:
    """The default pool's tokens before the memory bound: the context and the sessions beside it."""
    return context_length + DEFAULT_SESSIONS * min(context_length, SESSION_TOKENS)


def default_pool(
    context_length: int, block_size: int, bytes_per_token: int, available_bytes: int | None
) -> PoolSize:
    """The pool the daemon allocates when no flag sizes it (see the module docstring).

    `available_bytes` None (unknown) puts no memory bound on it.
    """
    # A prompt and its reply together fill at most the context (`reply_limits.reply_tokens`).
    needed = blocks_for_tokens(context_length, block_size)
    wanted = max(needed, blocks_for_tokens(wanted_tokens(context_length), block_size))
    if available_bytes is None:
        return PoolSize(wanted, block_size, bytes_per_token, "sized by the model")
    allowed = max(1, int(available_bytes * MEMORY_SHARE) // (bytes_per_token * block_size))
    if allowed >= wanted:
        return PoolSize(wanted, block_size, bytes_per_token, "sized by the model")
    if allowed >= needed:
        return PoolSize(allowed, block_size, bytes_per_token, "sized by the model, bounded by memory")
    short = context_length - allowed * block_size
    return PoolSize(allowed, block_size, bytes_per_token, "bounded by memory", short_of_context=short)


def pool_of_tokens(tokens: int, block_size: int, bytes_per_token: int) -> PoolSize:
    """The pool ``--kv-tokens`` asks for: at least `tokens` tokens, in whole blocks."""
    return PoolSize(blocks_for_tokens(tokens, block_size), block_size, bytes_per_token, "--kv-tokens")


def pool_of_megabytes(megabytes: float, block_size: int, bytes_per_token: int) -> PoolSize:
    """The pool ``--kv-cache-mb`` asks for: the whole blocks that fit in `megabytes` MiB (at least 1)."""
    blocks = max(1, int(megabytes * 1024 * 1024) // (bytes_per_token * block_size))
    return PoolSize(blocks, block_size, bytes_per_token, "--kv-cache-mb")


def pool_line(blocks: int, block_size: int, context_length: int) -> str:
    """`codedraft daemon`'s start-up line: the KV pool in tokens, against the context it serves."""
    tokens = blocks * block_size
    held = (
        f"holds the context of {context_length:,} tokens"
        if tokens >= context_length
        else f"fewer than the context of {context_length:,} tokens: longer prompts are refused"
    )
    return f"KV pool: {tokens:,} tokens ({blocks:,} blocks of {block_size}; {held})"
