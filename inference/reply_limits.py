"""The one owner of how many tokens a reply may have, and how much of the context it keeps.

Every backend (the own engine, a remote OpenAI-compatible engine) builds its limits here, the prompt
budget reserves the reply's room with :func:`reply_reserve`, and ``GetModelInfo`` reports the numbers
(``default_completion_tokens``, ``reply_reserve_limit``) so that clients size prompts by the same rule
instead of copying it. Torch-free: the language server may import it, but learns the values from the
daemon.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_COMPLETION_TOKENS = 128
"""max_tokens of a Complete that leaves it unset (lowered to the model's room)."""
DEFAULT_GENERATION_TOKENS = 512
"""max_tokens of a Generate that leaves it unset (lowered to the model's room)."""


@dataclass(frozen=True)
class RequestLimits:
    """What the daemon accepts, from its configuration and its models."""

    max_new_tokens: int
    default_completion_tokens: int
    default_generation_tokens: int
    has_draft_model: bool
    reply_reserve_limit: int
    """Most tokens kept for a reply whatever its max_tokens: a prompt may always use the rest."""


def reply_reserve_limit(context_length: int) -> int:
    """Half the context: a long max_tokens never squeezes the prompt below half."""
    return max(1, context_length // 2)


def reply_reserve(max_tokens: int, context_length: int) -> int:
    """Tokens kept for the reply of a request asking ``max_tokens``; its prompt may use the rest."""
    return max(1, min(max_tokens, reply_reserve_limit(context_length)))


def request_limits(context_length: int, max_new_tokens: int, has_draft_model: bool) -> RequestLimits:
    """The limits of a model of ``context_length`` tokens served with ``--max-new-tokens``: that limit
    below the context, and the defaults below both it and the reply's reserve."""
    max_new = max(1, min(max_new_tokens, context_length - 1))
    reserve = reply_reserve_limit(context_length)
    return RequestLimits(
        max_new_tokens=max_new,
        default_completion_tokens=max(1, min(DEFAULT_COMPLETION_TOKENS, max_new, reserve)),
        default_generation_tokens=max(1, min(DEFAULT_GENERATION_TOKENS, max_new, reserve)),
        has_draft_model=has_draft_model,
        reply_reserve_limit=reserve,
    )
