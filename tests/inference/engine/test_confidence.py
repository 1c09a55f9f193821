"""How sure the model was, per line: the tracker's arithmetic, and the engine's figures equal under
speculation and plain decoding, with the tokens that re-type healed text left out."""

from __future__ import annotations

import math

import pytest

from inference.config import SamplingParams, SpecMode
from inference.engine.confidence import ConfidenceTracker, LineConfidence
from inference.engine.sequence import Request
from inference.loading import LoadedModel
from inference.prompts.token_boundary import heal_prompt
from tests.inference.engine.engine_helpers import (
    PROMPTS,
    Finished,
    make_engine,
    one_torch_thread,
    run_all,
    tiny_k_quant_model,
    tiny_model,
)

_ = one_torch_thread


def test_tokens_count_toward_the_line_their_text_starts_on() -> None:
    tracker = ConfidenceTracker()
    for logprob, text in ((-1.0, ""), (-0.5, "x ="), (-1.5, " 1\n"), (-2.0, "\n\n"), (-0.25, "y")):
        tracker.push(logprob, text)
    assert tracker.first_token_logprob == -0.5  # the healing token (no text) is not the first
    assert tracker.lines() == (
        LineConfidence(2, -1.0, -1.5),
        LineConfidence(1, -2.0, -2.0),
        LineConfidence(0, 0.0, 0.0),
        LineConfidence(1, -0.25, -0.25),
    )


def test_no_text_no_figures() -> None:
    tracker = ConfidenceTracker()
    tracker.push(-3.0, "")
    assert (tracker.lines(), tracker.first_token_logprob) == ((), None)


@pytest.fixture(scope="module", params=["float32", "q4_k_native"])
def target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, one_torch_thread: None
) -> LoadedModel:
    """The float checkpoint, and a K-quant GGUF served in its own blocks (every form keeps the figures)."""
    if request.param == "q4_k_native":
        return tiny_k_quant_model(tmp_path_factory.mktemp("confidence-k"), seed=3)
    return tiny_model(tmp_path_factory.mktemp("confidence"), seed=3)


@pytest.mark.parametrize("spec", [SpecMode.NGRAM, SpecMode.AUTO])
def test_the_figures_under_speculation_equal_plain_decodings(target: LoadedModel, spec: SpecMode) -> None:
    ids = target.tokenizer.encode(PROMPTS[2])  # repetitive: prompt lookup proposes and is accepted

    def run(mode: SpecMode) -> Finished:
        request = Request(
            str(mode),
            prompt_token_ids=ids,
            sampling=SamplingParams(max_tokens=60, ignore_eos=True),
            spec_mode=mode,
        )
        return run_all(make_engine(target), [request])[str(mode)]

    plain, speculative = run(SpecMode.OFF), run(spec)
    assert speculative.token_ids == plain.token_ids and speculative.metrics.spec_accepted > 0
    lines, reference = speculative.metrics.lines, plain.metrics.lines
    assert [line.tokens for line in lines] == [line.tokens for line in reference]
    assert sum(line.tokens for line in lines) == 60
    for line, expected in zip(lines, reference, strict=True):
        assert math.isclose(line.mean_logprob, expected.mean_logprob, abs_tol=1e-4)
        assert math.isclose(line.min_logprob, expected.min_logprob, abs_tol=1e-4)


def test_tokens_that_retype_healed_text_do_not_count(target: LoadedModel) -> None:
    healed = heal_prompt(target.tokenizer, target.tokenizer.encode("def area(width, height):\n    retu"))
    assert healed.removed == b" retu"
    request = Request(
        "h",
        prompt_token_ids=healed.token_ids,
        sampling=SamplingParams(max_tokens=24, ignore_eos=True),
        healing=healed.removed,
    )
    done = run_all(make_engine(target), [request])["h"]
    shown = [target.tokenizer.decode(done.token_ids[: n + 1])[5:] for n in range(len(done.token_ids))]
    # A token that ends in half a character shows nothing until the next one completes it.
    with_text = sum(
        1
        for n, text in enumerate(shown)
        if text != (shown[n - 1] if n else "") and not text.endswith("\ufffd")
    )
    assert sum(line.tokens for line in done.metrics.lines) == with_text < len(done.token_ids)
    assert done.metrics.first_token_logprob is not None and done.metrics.first_token_logprob <= 0.0
