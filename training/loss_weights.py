"""Per-token loss weights of the target: the tokens a completion or a refactor is judged on weigh more.

* FIM middles (``middle_weights``): a one-line middle is under 1 % of a 2,048-token row's tokens, yet it
  is all a completion is scored on.
* Copies (``copy_weights``): a token that continues an n-gram seen earlier in its row is one the model
  could have copied; weighting them teaches the long-range copying a rename refactor needs (and what
  prompt-lookup speculation then speeds up).
"""

from __future__ import annotations

import torch


def middle_weights(ids: torch.Tensor, middle_id: int, end_id: int, weight: float) -> torch.Tensor | None:
    """(B, T-1) loss weights: ``weight`` where the next token belongs to a FIM middle (after
    ``<|fim_middle|>``, up to and including its ``<|endoftext|>``), 1 elsewhere; None for weight 1."""
    if weight == 1.0:
        return None
    positions = torch.arange(ids.size(1)).expand_as(ids)  # (B, T)
    last_middle = torch.where(ids == middle_id, positions, -1).cummax(dim=1).values  # (B, T)
    last_end = torch.where(ids == end_id, positions, -1).cummax(dim=1).values
    inside = (last_middle > last_end)[:, :-1]  # (B, T-1): label j is ids[j + 1]
    return torch.where(inside, weight, 1.0)


def copy_weights(ids: torch.Tensor, n: int, weight: float) -> torch.Tensor | None:
    """(B, T-1) loss weights: ``weight`` where the next token ends an n-gram that already occurred
    earlier in the same row (a copy), 1 elsewhere; None for weight 1."""
    if weight == 1.0:
        return None
    weights = torch.ones(ids.size(0), ids.size(1) - 1)
    for b, row in enumerate(ids.tolist()):
        seen: set[tuple[int, ...]] = set()
        for t in range(n - 1, len(row)):
            gram = tuple(row[t - n + 1 : t + 1])
            if gram in seen:
                weights[b, t - 1] = weight  # label t - 1 is token t
            else:
                seen.add(gram)
    return weights


def combine(*weights: torch.Tensor | None) -> torch.Tensor | None:
    """The element-wise maximum of the weights given (None entries ignored); None when all are."""
    present = [w for w in weights if w is not None]
    if not present:
        return None
    result = present[0]
    for w in present[1:]:
        result = torch.maximum(result, w)
    return result
