"""Streaming through the engine with a scripted model whose output is known in advance: UTF-8
characters split across tokens, stop strings split across tokens, and speculative rounds that emit
several tokens at once all stream the same text."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from torch import nn

from inference.config import EngineConfig, SamplingParams, SpecMode
from inference.engine.engine import LLMEngine
from inference.engine.model_runner import ModelRunner
from inference.engine.sequence import FinishReason, Request
from inference.layers.paged_kv import AttentionMetadata, KVCache
from inference.model_config import ModelConfig
from inference.tokenizer import Tokenizer
from tests.fixtures.tiny_models import TOKENIZER_VOCAB_SIZE, write_tokenizer
from tests.inference.engine.engine_helpers import run_all


class ScriptedModel(nn.Module):
    """Predicts script[position + 1] at every position: greedy decoding replays the script.

    Implements the runner's contract: one-hot hidden states over the vocabulary, an identity head.
    """

    def __init__(self, script: list[int]) -> None:
        super().__init__()
        self.script = script
        self.lm_head = nn.Identity()
        self.config = ModelConfig(
            model_type="scripted",
            vocab_size=TOKENIZER_VOCAB_SIZE,
            hidden_size=TOKENIZER_VOCAB_SIZE,
            intermediate_size=1,
            num_layers=1,
            num_heads=1,
            num_kv_heads=1,
            head_dim=1,
            max_position_embeddings=256,
        )

    def hidden_states(
        self,
        input_ids: torch.Tensor,
        positions: torch.Tensor,
        kv: KVCache,
        meta: AttentionMetadata,
        interrupt: Callable[[], bool] | None = None,
        rows: torch.Tensor | None = None,
    ) -> torch.Tensor:
        nxt = [self.script[min(int(p) + 1, len(self.script) - 1)] for p in positions]
        hidden = nn.functional.one_hot(torch.tensor(nxt), TOKENIZER_VOCAB_SIZE).float()  # (T, V)
        return hidden if rows is None else hidden[rows]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Tokenizer:
    return Tokenizer.from_dir(write_tokenizer(tmp_path_factory.mktemp("tok")))


def _engine(tokenizer: Tokenizer, text: str) -> tuple[LLMEngine, list[int]]:
    script = tokenizer.encode(text)
    runner = ModelRunner(ScriptedModel(script), 64, 4, torch.device("cpu"), torch.float32)
    return LLMEngine(runner, tokenizer, EngineConfig(block_size=4, num_kv_blocks=64)), script


@pytest.mark.parametrize("mode", [SpecMode.OFF, SpecMode.NGRAM])
def test_utf8_split_across_tokens_streams_whole_characters(tokenizer: Tokenizer, mode: SpecMode) -> None:
    text = "x = 'é' + 'é' + 'é' + 'é'  # café"
    engine, script = _engine(tokenizer, text)
    assert len(script) > len(text.encode()) // 2  # the é bytes really are separate tokens
    prompt = script[:3]
    request = Request(
        "u",
        prompt_token_ids=prompt,
        spec_mode=mode,
        sampling=SamplingParams(max_tokens=len(script) - 3, ignore_eos=True),
    )
    res = run_all(engine, [request])["u"]
    deltas = [o.delta for o in res.outputs]
    assert all("\ufffd" not in d for d in deltas)
    assert "".join(deltas) == tokenizer.decode(script[3:])
    assert res.reason == FinishReason.LENGTH
    if mode == SpecMode.NGRAM:
        assert res.metrics.spec_accepted > 0  # "'é' + " repeats: several tokens per round
    engine.check_invariants()


def test_stop_string_split_across_tokens(tokenizer: Tokenizer) -> None:
    engine, script = _engine(tokenizer, "value = compute(STOP) and more text after")
    request = Request(
        "s",
        prompt_token_ids=script[:2],
        spec_mode=SpecMode.OFF,
        sampling=SamplingParams(max_tokens=40, stop=("STOP",)),
    )
    res = run_all(engine, [request])["s"]
    assert res.reason == FinishReason.STOP
    assert tokenizer.decode(script[:2]) + res.text == "value = compute("
    assert all("S" not in o.delta for o in res.outputs)  # the partial "S", "ST" never leaked
    engine.check_invariants()
