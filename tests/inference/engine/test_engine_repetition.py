"""Loops stopped inside the engine: a scripted model replays a looping text; the request ends with
reason ``repetition`` long before max_tokens, its stream never carried the loop's later copies, and
speculative decoding (several tokens per round) gives exactly the plain result."""

from __future__ import annotations

import pytest
import torch

from inference.config import EngineConfig, SamplingParams, SpecMode
from inference.engine.engine import LLMEngine
from inference.engine.model_runner import ModelRunner
from inference.engine.sequence import FinishReason, Request
from inference.tokenizer import Tokenizer
from tests.fixtures.tiny_models import write_tokenizer
from tests.inference.engine.engine_helpers import Finished, run_all
from tests.inference.engine.test_engine_streaming import ScriptedModel

PROMPT_LINE = "def fibonacci(n):"
LOOPING = {
    # the loop's line is dropped whole: what is left is the line break before it
    "within_line": (PROMPT_LINE + "\n    return " + "x * " * 60 + "x\n", "\n"),
    # the repeated line is kept once
    "line_after_line": (PROMPT_LINE + "\n    print(n)" * 40 + "\n", "\n    print(n)"),
}
LEGITIMATE = (
    PROMPT_LINE + "\n    return n * n * n" + "".join(f"\n    t{i} = ({i}, '{i}')" for i in range(12)) + "\n"
)


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Tokenizer:
    return Tokenizer.from_dir(write_tokenizer(tmp_path_factory.mktemp("tok")))


def _run(
    tokenizer: Tokenizer, text: str, mode: SpecMode, stop_repetition: bool = True
) -> tuple[Finished, int]:
    script = tokenizer.encode(text)
    runner = ModelRunner(ScriptedModel(script), 96, 4, torch.device("cpu"), torch.float32)  # type: ignore[arg-type]
    config = EngineConfig(block_size=4, num_kv_blocks=96, stop_repetition=stop_repetition)
    engine = LLMEngine(runner, tokenizer, config)
    prompt = len(tokenizer.encode(PROMPT_LINE))
    assert tokenizer.decode(script[:prompt]) == PROMPT_LINE
    request = Request(
        "r",
        prompt_token_ids=script[:prompt],
        spec_mode=mode,
        sampling=SamplingParams(max_tokens=len(script) - prompt, ignore_eos=True),
    )
    done = run_all(engine, [request])["r"]
    engine.check_invariants()
    return done, len(script) - prompt


@pytest.mark.parametrize("name", sorted(LOOPING))
def test_a_looping_generation_ends_with_reason_repetition(tokenizer: Tokenizer, name: str) -> None:
    text, kept = LOOPING[name]
    plain, budget = _run(tokenizer, text, SpecMode.OFF)
    assert plain.reason == FinishReason.REPETITION
    assert plain.text == kept
    assert plain.metrics.generated_tokens < budget / 2
    speculative, _ = _run(tokenizer, text, SpecMode.NGRAM)
    assert speculative.metrics.spec_accepted > 0  # loops are what prompt lookup proposes best
    assert (speculative.text, speculative.token_ids, speculative.reason) == (
        plain.text,
        plain.token_ids,
        plain.reason,
    )


def test_with_the_guard_off_the_loop_runs_to_max_tokens(tokenizer: Tokenizer) -> None:
    text, _ = LOOPING["within_line"]
    done, budget = _run(tokenizer, text, SpecMode.OFF, stop_repetition=False)
    assert done.reason == FinishReason.LENGTH
    assert done.metrics.generated_tokens == budget
    assert done.text == text[len(PROMPT_LINE) :]


@pytest.mark.parametrize("mode", [SpecMode.OFF, SpecMode.NGRAM])
def test_legitimate_repetition_streams_whole(tokenizer: Tokenizer, mode: SpecMode) -> None:
    done, budget = _run(tokenizer, LEGITIMATE, mode)
    assert done.reason == FinishReason.LENGTH
    assert done.metrics.generated_tokens == budget
    assert done.text == LEGITIMATE[len(PROMPT_LINE) :]
    assert sum(bool(o.delta) for o in done.outputs) > 5  # streamed line by line, not all at the end
