"""Reciprocal rank fusion of the retrievers' lists, de-duplication, and packing into a token budget."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

from indexer.retrieval.base import RetrievalContext, Retriever, Snippet
from indexer.token_estimate import DEFAULT_ESTIMATE, TokenEstimate

RRF_K = 60


def reciprocal_rank_fusion(
    ranked_lists: Sequence[list[Snippet]], weights: Sequence[float] | None = None, k: int = RRF_K
) -> list[Snippet]:
    """One list from several: each snippet scores the sum of weight / (k + rank) over the lists holding
    it (weights default to 1, one per list).

    A snippet overlapping a better-fused one is folded into it (its sources join the survivor's), so
    no line reaches the prompt twice. Ties keep the order of the lists, then of ranks.
    """
    scores: dict[tuple[str, int, int], float] = {}
    first_seen: dict[tuple[str, int, int], Snippet] = {}
    sources: dict[tuple[str, int, int], list[str]] = {}
    for ranked, weight in zip(ranked_lists, weights or [1.0] * len(ranked_lists), strict=True):
        for rank, snippet in enumerate(ranked, start=1):
            key = (snippet.path, snippet.start_line, snippet.end_line)
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
            first_seen.setdefault(key, snippet)
            sources.setdefault(key, [])
            sources[key].extend(source for source in snippet.sources if source not in sources[key])
    order = sorted(scores, key=lambda key: -scores[key])
    fused: list[Snippet] = []
    for key in order:
        candidate = dataclasses.replace(first_seen[key], sources=tuple(sources[key]), score=scores[key])
        for index, kept in enumerate(fused):
            if kept.overlaps(candidate):
                merged = tuple(dict.fromkeys(kept.sources + candidate.sources))
                fused[index] = dataclasses.replace(kept, sources=merged, score=kept.score + candidate.score)
                break
        else:
            fused.append(candidate)
    return fused


def pack_into_budget(
    snippets: Sequence[Snippet], token_budget: int, estimate: TokenEstimate = DEFAULT_ESTIMATE
) -> list[Snippet]:
    """The best snippets that fit together in ``token_budget`` tokens as ``estimate`` counts them (a
    snippet too large is passed over)."""
    packed: list[Snippet] = []
    used = 0
    for snippet in snippets:
        cost = estimate.tokens(snippet.text)
        if used + cost <= token_budget:
            packed.append(snippet)
            used += cost
    return packed


def run_retrievers(
    retrievers: Sequence[Retriever],
    context: RetrievalContext,
    token_budget: int,
    per_retriever: int = 10,
    estimate: TokenEstimate = DEFAULT_ESTIMATE,
) -> list[Snippet]:
    """Runs the retrievers in turn until the time budget is spent, fuses and packs their results.

    A cancelled call returns nothing: its caller has moved on.
    """
    ranked: list[list[Snippet]] = []
    for retriever in retrievers:
        if context.should_stop():
            break
        ranked.append(retriever.retrieve(context, per_retriever))
    if context.cancel.is_set():
        return []
    fused = [snippet for snippet in reciprocal_rank_fusion(ranked) if not context.in_own_region(snippet)]
    return pack_into_budget(fused, token_budget, estimate)


def deadline_after(time_budget_ms: float) -> float:
    """The monotonic time a budget of ``time_budget_ms`` ends."""
    return time.monotonic() + time_budget_ms / 1000.0
