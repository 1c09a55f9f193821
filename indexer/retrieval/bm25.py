"""BM25 over the index's chunks, with the identifiers around the cursor as the query."""

from __future__ import annotations

from indexer.retrieval.base import RetrievalContext, Snippet
from indexer.term_statistics import TERM_COUNT_FLOOR, too_common
from indexer.terms import query_terms

MAX_SCORED_CHUNKS = 1500
"""FTS5 scores every chunk that holds any query term (about 1.5 ms per thousand on this machine), so
a query keeps the rarest of its terms that together hold at most this many chunks: its cost stays
bounded as the index grows. Rare terms carry most of BM25's score. Below 12,500 chunks no query can
reach the budget (12 terms, each in at most 1% of the chunks). On a 20,000-file site-packages tree
(370,000 chunks; ``codedraft bench index``, 300 cursors) going from 3,000 to 1,500 moved fused
retrieval's CPU p95 from 15.8 to 10.4 ms under a load of 10, BM25's recall@5 from 23/300 to 21/300,
and the fused recall@5 not at all (289/300); from no budget to 3,000 BM25's recall@5 had moved from
26/300 to 26/300 on the standard library and from 15/300 to 14/300 on that tree."""


def within_scoring_budget(terms: list[str], counts: dict[str, int], budget: int) -> list[str]:
    """``terms`` without the most common ones beyond ``budget`` chunks in all (the rarest is always
    kept), in their order. ``counts`` has lower-cased terms; absent ones count ``TERM_COUNT_FLOOR``."""
    by_rarity = sorted(terms, key=lambda term: counts.get(term.lower(), TERM_COUNT_FLOOR))
    kept: set[str] = set()
    total = 0
    for term in by_rarity:
        total += counts.get(term.lower(), TERM_COUNT_FLOOR)
        if kept and total > budget:
            break
        kept.add(term)
    return [term for term in terms if term in kept]


class Bm25Retriever:
    """Chunks sharing rare identifiers with the code around the cursor (SQLite FTS5's bm25)."""

    name = "bm25"

    def __init__(
        self,
        lines_before: int = 20,
        lines_after: int = 5,
        max_terms: int = 12,
        max_scored_chunks: int = MAX_SCORED_CHUNKS,
    ) -> None:
        self.lines_before = lines_before
        self.lines_after = lines_after
        self.max_terms = max_terms
        self.max_scored_chunks = max_scored_chunks

    def retrieve(self, context: RetrievalContext, limit: int) -> list[Snippet]:
        # Terms nearest the cursor first: the prefix read backwards, then the suffix.
        prefix_terms = query_terms(context.prefix_window(self.lines_before), self.max_terms)
        suffix_terms = query_terms(context.suffix_window(self.lines_after), self.max_terms)
        candidates = list(dict.fromkeys(prefix_terms + suffix_terms))
        if not candidates or context.should_stop():
            return []
        # A term in many chunks costs FTS5 a scoring pass over each of them and ranks almost nothing:
        # only terms rare enough to discriminate go into the query.
        common = context.store.common_terms()
        counts = context.store.term_counts()
        if common is None:  # not computed yet for this store: ask the index about these terms
            counts, total = context.store.term_document_counts(candidates)
            common = too_common(counts, total)
        terms = [term for term in candidates if term.lower() not in common][: self.max_terms]
        terms = within_scoring_budget(terms, counts, self.max_scored_chunks)
        if not terms:
            return []
        # Ask for more than the limit: the cursor's own chunks are among the best matches.
        snippets = [
            Snippet(row.path, row.start_line, row.end_line, row.text, (self.name,), score)
            for row, score in context.store.search_chunks(terms, limit + 8)
        ]
        return [snippet for snippet in snippets if not context.in_own_region(snippet)][:limit]
