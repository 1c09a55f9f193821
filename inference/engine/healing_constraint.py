"""The engine's half of token healing: constrain the first tokens, and hide the text they reproduce.

`inference.prompts.token_boundary` removes the prompt's last, unstable tokens and hands the engine their
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

# Blanks the user typed up to the cursor (a line's indentation, the space after `x =`) end there: a
# suggestion that adds more would put its line at another indentation than the one the user chose
# (the editor's post-processing would then strip them, leaving a line planned for another block).
BLANKS = b" \t"


class HealingConstraint:
    """Which tokens may come next while the output has not yet reproduced `removed`.

    When `removed` ends with a blank, the byte right after it may not be another blank (see BLANKS):
    the constraint then also bars tokens that go on with a blank past the removed text, and holds for
    one more token when the output ends exactly where the removed text does.

    `boundaries` (`inference.prompts.token_boundary.token_boundaries`): the byte offsets inside `removed`
    where a token that does not reach its end may end; None: anywhere. A token that reaches or passes
    the end is not ruled out by them.

    Stateless over the output: what is left is recomputed from the output tokens, so a preempted and
    readmitted request, or a rolled-back speculative round, needs no bookkeeping here.
    """

    def __init__(
        self, index: VocabularyIndex, removed: bytes, boundaries: frozenset[int] | None = None
    ) -> None:
        self.index = index
        self.removed = removed
        self.boundaries = boundaries
        self.not_then = BLANKS if removed[-1:] and removed[-1:] in BLANKS else b""
        self._barred_at_end: torch.Tensor | None = None

    def remaining(self, output_ids: Sequence[int]) -> bytes | None:
        """The bytes still to reproduce after `output_ids` (b"" when done, None when they disagree)."""
        return self.index.remaining_after(self.removed, list(output_ids[: len(self.removed)]))

    def next_tokens(self, output_ids: Sequence[int]) -> tuple[torch.Tensor, bool] | None:
        """After `output_ids`: (ids, True) when only these ids may come next, (ids, False) when these
        may not, None when the next token is free."""
        if len(output_ids) > len(self.removed):
            return None  # every token holds a byte at least: the removed text is behind
        left = self.remaining(output_ids)
        if left:
            return self._agreeing(left), True
        if left is None or not self.not_then or self.index.bytes_of(list(output_ids)) != self.removed:
            return None
        if self._barred_at_end is None:
            self._barred_at_end = torch.cat([self.index.starting_with(bytes([b])) for b in self.not_then])
        return self._barred_at_end, False

    def _agreeing(self, left: bytes) -> torch.Tensor:
        if self.boundaries is None:
            return self.index.agreeing_ids(left, self.not_then)
        done = len(self.removed) - len(left)
        ends = {offset - done for offset in self.boundaries if offset > done}
        ids = self.index.agreeing_ids(left, self.not_then, ends)
        # Never leave no way on (a tokenizer that splits the probes oddly): then any agreeing token.
        return ids if len(ids) else self.index.agreeing_ids(left, self.not_then)

    def mask(
        self, logits: torch.Tensor, output_ids: Sequence[int], drafts: Sequence[int] = ()
    ) -> torch.Tensor:
        """`logits` (rows, V), row i masked for the output followed by drafts[:i]; unchanged rows
        where the next token is free (or where an earlier draft already disagreed: such a row is
        never used, as the disagreeing draft is rejected)."""
        output = list(output_ids)
        if len(output) > len(self.removed):
            return logits
        masked: torch.Tensor | None = None
        for row in range(logits.shape[0]):
            rule = self.next_tokens([*output, *drafts[:row]])
            if rule is None:
                break
            ids, allowed = rule
            ids = ids[ids < logits.shape[-1]]
            if masked is None:
                masked = logits.clone()
            if allowed:
                keep = masked[row, ids]
                masked[row] = float("-inf")
                masked[row, ids] = keep
            else:
                masked[row, ids] = float("-inf")
        return logits if masked is None else masked


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
