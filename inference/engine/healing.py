"""The engine's half of token healing: constrain the first tokens, and hide the text they reproduce.

`inference.prompts.healing` removes the prompt's last, unstable tokens and hands the engine their
bytes (`Request.healing`). Until the output has reproduced those bytes, every logits row the engine
chooses from is masked to the tokens that agree with what is left of them (`HealingConstraint`):
the same mask in a plain step, in the first step after the prefill, and in each row of a speculative
verification (the row after proposals d_1..d_i is masked by what is left after d_1..d_i). Greedy
speculation is then still token for token the constrained plain decoding, and sampled speculation
follows the constrained distribution, whatever the proposer proposed. `HealedTextDecoder` drops
the reproduced bytes from the streamed text, before stop strings are looked for, so the client's
text starts at the cursor.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from inference.engine.text_stream import IncrementalDecoding
from inference.prompts.vocabulary import VocabularyIndex


class HealingConstraint:
    """Which tokens may come next while the output has not yet reproduced `removed`.

    Stateless over the output: what is left is recomputed from the output tokens, so a preempted and
    readmitted request, or a rolled-back speculative round, needs no bookkeeping here.
    """

    def __init__(self, index: VocabularyIndex, removed: bytes) -> None:
        self.index = index
        self.removed = removed

    def remaining(self, output_ids: Sequence[int]) -> bytes | None:
        """The bytes still to reproduce after `output_ids` (b"" when done, None when they disagree)."""
        return self.index.remaining_after(self.removed, list(output_ids[: len(self.removed)]))

    def mask(
        self, logits: torch.Tensor, output_ids: Sequence[int], drafts: Sequence[int] = ()
    ) -> torch.Tensor:
        """`logits` (rows, V), row i masked for the output followed by drafts[:i]; unchanged rows
        where nothing is left to reproduce (or where an earlier draft already disagreed: such a row
        is never used, as the disagreeing draft is rejected)."""
        output = list(output_ids)
        if len(output) >= len(self.removed) or self.remaining(output) == b"":
            return logits
        masked = logits.clone()
        for row in range(logits.shape[0]):
            left = self.remaining([*output, *drafts[:row]])
            if not left:
                break
            allowed = self.index.agreeing_ids(left)
            allowed = allowed[allowed < logits.shape[-1]]
            keep = masked[row, allowed]
            masked[row] = float("-inf")
            masked[row, allowed] = keep
        return masked


def constrained(
    constraint: HealingConstraint | None,
    logits: torch.Tensor,
    output_ids: Sequence[int],
    drafts: Sequence[int] = (),
) -> torch.Tensor:
    """`logits` masked by the sequence's healing constraint, or as they are when it has none."""
    return logits if constraint is None else constraint.mask(logits, output_ids, drafts)


class HealedTextDecoder:
    """A decoder whose text starts after the first `removed` characters (the reproduced prompt tail)."""

    def __init__(self, inner: IncrementalDecoding, removed: str) -> None:
        self._inner = inner
        self._skip = removed

    def push(self, token_id: int) -> str:
        """The new text for one more token, minus what still reproduces the removed text."""
        return self._strip(self._inner.push(token_id))

    def flush(self) -> str:
        """Text still held back, minus what still reproduces the removed text."""
        return self._strip(self._inner.flush())

    def _strip(self, text: str) -> str:
        if not self._skip or not text:
            return text
        if text.startswith(self._skip):
            text, self._skip = text[len(self._skip) :], ""
            return text
        if self._skip.startswith(text):
            self._skip = self._skip[len(text) :]
            return ""
        # Only an output cut short (max tokens, cancel) can disagree; show it as it is.
        self._skip = ""
        return text
