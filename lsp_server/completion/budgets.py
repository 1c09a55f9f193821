"""Prompt budgets that fit the daemon's model, so the server's cache-stable window is the one used.

The settings' prefix, suffix and context budgets are the most a prompt may hold. When together with
the tokens to generate they exceed the model's context, the daemon would cut the prompt itself, from
the start of the prefix, at a different place after every keystroke, and the KV cache would miss
from there on. Scaling the budgets down here instead keeps the cut on the window's 16-line steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from indexer.token_estimate import TokenEstimate
from lsp_server.completion.window import LINE_STEP
from lsp_server.config import CompletionSettings
from lsp_server.model_room import ModelRoom

# Template markers, the path header and the snippets' headers, plus the error of the token
# estimate: the budgets aim below the model's room by this share.
HEADROOM = 0.85
RESERVED_TOKENS = 32


@dataclass(frozen=True)
class PromptBudgets:
    """Tokens of the file before and after the cursor, and of retrieved context, in one prompt."""

    prefix: int
    suffix: int
    context: int
    line_step: int = LINE_STEP
    """The window's edges move in steps of this many lines (see ``window.py``)."""
    estimate: TokenEstimate = field(default_factory=TokenEstimate)
    """How these tokens are counted in characters."""


def fit_budgets(settings: CompletionSettings, room: ModelRoom) -> PromptBudgets:
    """The settings' budgets, scaled down in proportion when they do not fit the model's room (an
    unknown context: the settings are used as they are), counted with the model's estimate."""
    wanted = PromptBudgets(
        settings.prefix_budget_tokens,
        settings.suffix_budget_tokens,
        settings.context_budget_tokens,
        estimate=room.estimate,
    )
    context_length = room.context_length
    if context_length <= 0:
        return wanted
    # max_tokens itself is sent as set; the daemon keeps room.reply_reserve(max_tokens) for the reply
    room_tokens = int((context_length - room.reply_reserve(settings.max_tokens) - RESERVED_TOKENS) * HEADROOM)
    total = wanted.prefix + wanted.suffix + wanted.context
    if total <= room_tokens:
        return wanted
    scale = max(room_tokens, 0) / total
    return PromptBudgets(
        prefix=max(1, int(wanted.prefix * scale)),
        suffix=int(wanted.suffix * scale),
        context=int(wanted.context * scale),
        estimate=wanted.estimate,
    )
