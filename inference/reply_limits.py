"""The one owner of how many tokens a reply may have, and how much of the context it keeps.

Every backend (the own engine, a remote OpenAI-compatible engine) builds its limits with
:func:`request_limits`; every clamp of a request's max_tokens (to ``--max-new-tokens``, to the
context, to what the context holds after the prompt) is :func:`reply_tokens`; the prompt budget
keeps the reply's room with :func:`reply_reserve`. ``GetModelInfo`` reports the numbers
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
    """What the daemon accepts, from its configuration and its models.

    Invariant: 1 <= default_*_tokens <= min(max_new_tokens, reply_reserve_limit) and
    max_new_tokens < context_length (a reply always leaves the prompt one token).
    """

    context_length: int
    max_new_tokens: int
    default_completion_tokens: int
    default_generation_tokens: int
    has_draft_model: bool
    reply_reserve_limit: int
    """Most tokens kept for a reply whatever its max_tokens: a prompt may always use the rest."""

    def reply_tokens(self, asked: int) -> int:
        """The max_tokens a request asking ``asked`` is served with before its prompt is known."""
        return reply_tokens(asked, self.context_length, max_new_tokens=self.max_new_tokens)


def reply_tokens(
    asked: int, context_length: int, prompt_tokens: int = 0, max_new_tokens: int | None = None
) -> int:
    """The one clamp of a reply's length: ``asked`` lowered to ``max_new_tokens`` (the daemon's
    ``--max-new-tokens``, when given) and to what the context holds after ``prompt_tokens``; at least 1."""
    room = context_length - prompt_tokens
    if max_new_tokens is not None:
        room = min(room, max_new_tokens)
    return max(1, min(asked, room))


def reply_reserve_limit(context_length: int) -> int:
    """Half the context: a long max_tokens never squeezes the prompt below half."""
    return max(1, context_length // 2)


def reply_reserve(max_tokens: int, context_length: int) -> int:
    """Tokens kept for the reply of a request asking ``max_tokens``; its prompt may use the rest."""
    return max(1, min(max_tokens, reply_reserve_limit(context_length)))


def request_limits(context_length: int, max_new_tokens: int, has_draft_model: bool) -> RequestLimits:
    """The limits of a model of ``context_length`` tokens served with ``--max-new-tokens``: that limit
    below the context (one token left for a prompt), and the defaults below both it and the reply's
    reserve."""
    max_new = reply_tokens(max_new_tokens, context_length, prompt_tokens=1)
    reserve = reply_reserve_limit(context_length)

    def default(tokens: int) -> int:
        return min(reply_tokens(tokens, context_length, max_new_tokens=max_new), reserve)

    return RequestLimits(
        context_length=context_length,
        max_new_tokens=max_new,
        default_completion_tokens=default(DEFAULT_COMPLETION_TOKENS),
        default_generation_tokens=default(DEFAULT_GENERATION_TOKENS),
        has_draft_model=has_draft_model,
        reply_reserve_limit=reserve,
    )
