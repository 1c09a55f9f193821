"""How sure the model was of the text it wrote, per line: the figures a client's confidence gate reads.

Each generated token that produced text counts with the natural log of its probability under the
distribution it was chosen from (the target model's row, after token healing's constraint where one
applies), so the figures are those of plain decoding under speculation too: a verified token's row is
the target's own. A token counts toward the line its text starts on, and each line end in its text
closes a line (a line of no token, between two line ends of one token, has no figures). Tokens that
produced no text (those that re-type what token healing removed, or the first bytes of a character
split across tokens) do not count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class LineConfidence:
    """One line of the output: how many tokens it took, their mean and least log-probability."""

    tokens: int
    mean_logprob: float
    min_logprob: float


def token_logprob(row: torch.Tensor, token: int) -> float:
    """The log-probability of ``token`` under the logits ``row`` (a masked entry gives -inf)."""
    return float(torch.log_softmax(row.float(), dim=-1)[token])


class ConfidenceTracker:
    """Per-line log-probability figures of one request's output, fed token by token."""

    def __init__(self) -> None:
        self._lines: list[LineConfidence] = []
        self._count = 0
        self._sum = 0.0
        self._min = math.inf
        self.first_token_logprob: float | None = None

    def push(self, logprob: float, text: str) -> None:
        """A generated token whose text was ``text``."""
        if not text:
            return
        if self.first_token_logprob is None:
            self.first_token_logprob = logprob
        self._count += 1
        self._sum += logprob
        self._min = min(self._min, logprob)
        for _ in range(text.count("\n")):
            self._close()

    def lines(self) -> tuple[LineConfidence, ...]:
        """The finished lines and the line being written, first to last."""
        if self._count:
            return (*self._lines, LineConfidence(self._count, self._sum / self._count, self._min))
        return tuple(self._lines)

    def _close(self) -> None:
        mean = self._sum / self._count if self._count else 0.0
        self._lines.append(LineConfidence(self._count, mean, self._min if self._count else 0.0))
        self._count, self._sum, self._min = 0, 0.0, math.inf
