"""The side-by-side benchmark's own logic (llama.cpp itself runs only in the benchmark)."""

from __future__ import annotations

import importlib
import io
import pickle
import sys
from pathlib import Path

import pytest
from torch import nn

from bench import llamacpp_runner
from bench.codedraft_runner import with_weights
from bench.llamacpp_process import serve
from bench.llamacpp_runner import LlamaCppUnavailable, Timed, ensure_llama_cpp
from bench.versus_llamacpp import Pair, agreement
from inference.layers.linear import Float16Linear
from inference.loading import load_model
from tests.fixtures.tiny_models import make_tiny_checkpoint


def test_ratio_rows_say_which_side_wins() -> None:
    assert Pair("decode", 80.0, 100.0, "", higher_is_better=True).row().endswith("0.80x (worse)")
    assert Pair("first token", 20.0, 40.0, "ms", higher_is_better=False).row().endswith("0.50x (better)")


def test_agreement_counts_up_to_the_first_difference() -> None:
    assert agreement([1, 2, 3, 4], [1, 2, 9, 4]) == (2, 4)
    assert agreement([1, 2], [1, 2, 3]) == (2, 3)


def test_decode_rate_leaves_out_the_first_token() -> None:
    assert Timed([1, 2, 3], first_token_s=1.0, total_s=2.0, evaluated=3).decode_tokens_per_s == 2.0
    assert Timed([1], first_token_s=1.0, total_s=1.0, evaluated=3).decode_tokens_per_s == 0.0
    cpu = Timed([1, 2, 3], 1.0, 9.0, 3, first_token_cpu_s=0.5, total_cpu_s=1.0)
    assert cpu.decode_tokens_per_cpu_s == 4.0


def test_each_weight_form_serves_a_packed_copy(tmp_path: Path) -> None:
    loaded = load_model(make_tiny_checkpoint(tmp_path / "tiny", "llama"), device="cpu")
    plain = with_weights(loaded, "checkpoint")
    half = with_weights(loaded, "float16")
    assert (plain.weights, half.weights) == (None, "float16")
    assert plain.model is not loaded.model and isinstance(plain.model.lm_head, nn.Linear)
    assert isinstance(half.model.lm_head, Float16Linear)
    assert isinstance(loaded.model.lm_head, nn.Linear)  # the original is left as loaded


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


def _served(*calls: tuple[str, tuple[object, ...]]) -> list[tuple[str, object]]:
    requests = io.BytesIO()
    for call in calls:
        pickle.dump(call, requests)
    requests.seek(0)
    replies = io.BytesIO()
    serve(requests, replies)  # returns when the calls run out, as when the parent closes the pipe
    replies.seek(0)
    answers = []
    while replies.tell() < len(replies.getvalue()):
        answers.append(pickle.load(replies))
    return answers


def test_the_llama_cpp_process_answers_every_call_and_survives_bad_ones() -> None:
    answers = _served(("generate", ([1, 2], 4, False)), ("reset_everything", ()), ("tokenize", ("x",)))
    assert answers == [
        ("error", "llama.cpp: no model loaded"),
        ("error", "llama.cpp: unknown call 'reset_everything'"),
        ("error", "llama.cpp: no model loaded"),
    ]
