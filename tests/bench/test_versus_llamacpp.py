"""The side-by-side benchmark's own logic (llama.cpp itself runs only in the benchmark)."""

from __future__ import annotations

import importlib
import sys

import pytest

from bench import llamacpp_runner
from bench.llamacpp_runner import LlamaCppUnavailable, Timed, ensure_llama_cpp
from bench.versus_llamacpp import Pair, _agreement


def test_ratio_rows_say_which_side_wins() -> None:
    assert Pair("decode", 80.0, 100.0, "", higher_is_better=True).row().endswith("0.80x (worse)")
    assert Pair("first token", 20.0, 40.0, "ms", higher_is_better=False).row().endswith("0.50x (better)")


def test_agreement_counts_up_to_the_first_difference() -> None:
    assert _agreement([1, 2, 3, 4], [1, 2, 9, 4]) == (2, 4)
    assert _agreement([1, 2], [1, 2, 3]) == (2, 3)


def test_decode_rate_leaves_out_the_first_token() -> None:
    assert Timed([1, 2, 3], first_token_s=1.0, total_s=2.0, evaluated=3).decode_tokens_per_s == 2.0
    assert Timed([1], first_token_s=1.0, total_s=1.0, evaluated=3).decode_tokens_per_s == 0.0


def test_a_missing_llama_cpp_is_named_with_its_pinned_requirement(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = importlib.import_module

    def no_llama_cpp(name: str, package: str | None = None) -> object:
        if name == "llama_cpp":
            raise ImportError("No module named 'llama_cpp'")
        return real_import(name, package)

    monkeypatch.setattr(llamacpp_runner.importlib, "import_module", no_llama_cpp)
    monkeypatch.delitem(sys.modules, "llama_cpp", raising=False)
    with pytest.raises(LlamaCppUnavailable, match=r"llama-cpp-python==0\.3\.36"):
        ensure_llama_cpp(install=False)
