from __future__ import annotations

import pytest

from lsp_server.completion.debounce import AdaptiveDebounce
from lsp_server.completion.suggestion_cache import SuggestionCache
from tests.lsp_server.set_clock import set_clock


def test_typing_through_a_suggestion_serves_the_rest() -> None:
    cache = SuggestionCache()
    cache.remember("file:///a.py", "x = comp", "\nprint(x)", "ute(1, 2)")
    assert cache.lookup("file:///a.py", "x = comp", "\nprint(x)") == "ute(1, 2)"
    assert cache.lookup("file:///a.py", "x = compu", "\nprint(x)") == "te(1, 2)"
    assert cache.lookup("file:///a.py", "x = compute(1,", "\nprint(x)") == " 2)"


def test_no_hit_when_the_user_diverges_or_finishes() -> None:
    cache = SuggestionCache()
    cache.remember("doc", "x = comp", "", "ute(1)")
    assert cache.lookup("doc", "x = compa", "") is None
    assert cache.lookup("doc", "x = compute(1)", "") is None
    assert cache.lookup("doc", "x = comp", "changed suffix") is None
    assert cache.lookup("doc", "y = comp", "") is None
    assert cache.lookup("other", "x = comp", "") is None
    cache.forget("doc")
    assert cache.lookup("doc", "x = comp", "") is None


def test_cache_is_bounded() -> None:
    cache = SuggestionCache(per_document=2, documents=2)
    for index in range(3):
        cache.remember("doc", f"p{index}", "", "abc")
    assert cache.lookup("doc", "p0", "") is None
    assert cache.lookup("doc", "p2", "") == "abc"
    cache.remember("d2", "p", "", "x1")
    cache.remember("d3", "p", "", "x2")
    assert cache.lookup("doc", "p2", "") is None


def test_debounce_grows_with_fast_typing_and_stays_clamped(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = set_clock(monkeypatch, "lsp_server.completion.debounce")
    debounce = AdaptiveDebounce(min_ms=50, max_ms=300)

    def edited(document: str, at: float) -> None:
        clock.now = at
        debounce.edited(document)

    assert debounce.delay_ms("d") == 50
    for step in range(10):
        edited("d", step * 0.120)
    assert debounce.delay_ms("d") == pytest.approx(180.0)  # 120 ms between keys, times 1.5
    for step in range(10):
        edited("fast", step * 0.010)
    assert debounce.delay_ms("fast") == 50
    edited("d", 100.0)  # a long pause does not count as rhythm
    assert debounce.delay_ms("d") == pytest.approx(180.0)
    debounce.forget("d")
    assert debounce.delay_ms("d") == 50
