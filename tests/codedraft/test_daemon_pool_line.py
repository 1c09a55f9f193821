"""The line `codedraft daemon` prints at start about its KV pool."""

from __future__ import annotations

from codedraft.daemon_command import pool_line


def test_the_start_up_line_gives_the_pool_in_tokens_against_the_context() -> None:
    assert pool_line(1024, 16, 8192) == (
        "KV pool: 16,384 tokens (1,024 blocks of 16; holds the context of 8,192 tokens)"
    )
    assert pool_line(6, 16, 512) == (
        "KV pool: 96 tokens (6 blocks of 16; fewer than the context of 512 tokens: longer prompts are "
        "refused)"
    )
