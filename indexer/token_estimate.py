"""The one estimate of how many tokens a text is, where exact counts would cost a tokenizer.

The daemon counts real tokens. Everything that sizes a prompt before sending it (the language
server's window, the retrieved snippets' budget, the cold-prompt planner) estimates with this class,
calibrated from the characters per token the daemon measured for its model (``ModelInfo.
chars_per_token``), so that all of them agree and match the served tokenizer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

DEFAULT_CHARS_PER_TOKEN = 3.5
"""Characters per token of source code for a typical code tokenizer, used while the daemon has not
said (or cannot: a remote engine without a tokenizer)."""


@dataclass(frozen=True)
class TokenEstimate:
    """Token counts as characters / ``chars_per_token``, rounded up."""

    chars_per_token: float = DEFAULT_CHARS_PER_TOKEN

    @classmethod
    def measured(cls, chars_per_token: float) -> TokenEstimate:
        """The estimate for a measured rate; the default one for 0 or a value that is no rate."""
        if not math.isfinite(chars_per_token) or chars_per_token <= 0:
            return cls()
        return cls(chars_per_token)

    def tokens(self, text: str) -> int:
        """About how many tokens ``text`` is."""
        return self.tokens_of_chars(len(text))

    def tokens_of_chars(self, chars: int) -> int:
        """About how many tokens ``chars`` characters of code are."""
        return math.ceil(chars / self.chars_per_token)

    def chars(self, tokens: int) -> float:
        """About how many characters ``tokens`` tokens hold."""
        return tokens * self.chars_per_token


DEFAULT_ESTIMATE = TokenEstimate()
"""The estimate at :data:`DEFAULT_CHARS_PER_TOKEN`, for callers that were given none."""
