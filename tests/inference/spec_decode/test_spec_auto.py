"""Mode auto decides from tokens, not clocks: on a scripted model whose output copies its prompt it
speculates with prompt lookup, on one whose prompt only misleads prompt lookup it decodes plainly.
Round costs are fixed (a verify round costs 2 plain steps, as on a small model on a CPU), so the
decisions asserted here do not depend on the machine."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import torch

from inference.config import SamplingParams, SpecMode
from inference.engine.engine import LLMEngine
from inference.engine.sequence import Request
from inference.loading import LoadedModel, load_model
from inference.spec_decode.round_costs import RoundCosts
from tests.fixtures.scripted_model import CHAT_PROMPT_END, CHAT_SCRIPT, make_scripted_checkpoint
from tests.fixtures.tiny_models import make_tiny_checkpoint, special_token_id
from tests.inference.engine.engine_helpers import make_engine, one_torch_thread, run_all

pytestmark = pytest.mark.usefixtures(one_torch_thread.__name__)
_ = one_torch_thread


class FixedCosts(RoundCosts):
    """Every verify round costs `ratio` plain steps, whatever the clock says."""

    def __init__(self, ratio: float) -> None:
        super().__init__()
        self.fixed = ratio

    def record(self, kind: str, rows: int, seconds: float) -> None:
        """Ignore the clock."""

    def wants_plain_sample(self) -> bool:
        """Nothing to measure."""
        return False

    def ratio(self, kind: str, rows: int) -> float | None:
        """The fixed price."""
        return self.fixed


def _script_words(directory: Path, count: int) -> str:
    """`count` distinct single-token words (the scripted model needs a script without repeats)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(make_tiny_checkpoint(directory, "llama") / "tokenizer.json"))
    taken = {*tokenizer.encode(CHAT_SCRIPT).ids, *tokenizer.encode(CHAT_PROMPT_END).ids}  # the chat script's
    words = sorted(
        t
        for t, i in tokenizer.get_vocab().items()
        if t[:1] == "Ġ" and t[1:].isalpha() and t[1:].islower() and len(t) > 3 and i not in taken
    )
    return "".join(f" {w[1:]}" for w in words[:count])


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> tuple[LoadedModel, list[int]]:
    """A model whose greedy output after <|fim_middle|> is a 48-token script, and that script."""
    root = tmp_path_factory.mktemp("auto")
    text = _script_words(root / "words", 48)
    model = load_model(make_scripted_checkpoint(root / "model", completion=text), "cpu", dtype=torch.float32)
    script = model.tokenizer.encode(text)
    assert len(script) == 48 == len(set(script))
    return model, script


def _run(model: LoadedModel, prompt: list[int], mode: SpecMode, ratio: float) -> tuple[list[int], int, int]:
    engine: LLMEngine = make_engine(model)
    engine.runner.costs = FixedCosts(ratio)
    request = Request(
        f"r-{mode.value}", prompt_token_ids=prompt, spec_mode=mode, sampling=SamplingParams(max_tokens=60)
    )
    result = run_all(engine, [request])[request.request_id]
    engine.check_invariants()
    return result.token_ids, result.metrics.spec_proposed, result.metrics.target_forward_passes


def test_auto_speculates_where_the_output_copies_the_prompt(scripted: tuple[LoadedModel, list[int]]) -> None:
    model, script = scripted
    prompt = [*script, special_token_id("<|fim_middle|>")]  # the output repeats the prompt
    plain, _, plain_passes = _run(model, prompt, SpecMode.OFF, 2.0)
    assert plain[:48] == script
    for mode in (SpecMode.NGRAM, SpecMode.AUTO):
        tokens, proposed, passes = _run(model, prompt, mode, 2.0)
        assert tokens == plain, mode
        assert proposed > 30, mode
        assert passes <= plain_passes // 3, (mode, passes, plain_passes)


def test_auto_decodes_plainly_where_prompt_lookup_only_misleads(
    scripted: tuple[LoadedModel, list[int]],
) -> None:
    """Every pair of consecutive script tokens occurs in the prompt, followed by a wrong token: prompt
    lookup always has a proposal and it would always be rejected. Where verifying costs 2 plain steps
    neither auto nor ngram verifies one (they are scored in shadow); where it costs a plain step, mode
    ngram tries them and they are rejected, which shows that they were proposed."""
    model, script = scripted
    wrong = model.tokenizer.encode(" zzz")[-1]
    misleading = [t for a, b in itertools.pairwise(script) for t in (a, b, wrong)]
    prompt = [*misleading, special_token_id("<|fim_middle|>")]
    plain, _, plain_passes = _run(model, prompt, SpecMode.OFF, 2.0)
    tokens, proposed, passes = _run(model, prompt, SpecMode.NGRAM, 0.5)
    assert tokens == plain and proposed > 0 and passes == plain_passes  # every round rejected
    for mode in (SpecMode.NGRAM, SpecMode.AUTO):
        tokens, proposed, passes = _run(model, prompt, mode, 2.0)
        assert tokens == plain and proposed == 0 and passes == plain_passes, mode


def test_auto_speculates_on_a_cheap_verifier_only_when_acceptance_pays(
    scripted: tuple[LoadedModel, list[int]],
) -> None:
    """Where verifying costs about a plain step (a GPU), a copy is worth verifying from the start; where
    it costs 8 plain steps, even a perfect copy of a few tokens at a time is not."""
    model, script = scripted
    prompt = [*script, special_token_id("<|fim_middle|>")]
    _, cheap, _ = _run(model, prompt, SpecMode.AUTO, 1.0)
    _, costly, _ = _run(model, prompt, SpecMode.AUTO, 8.0)
    assert cheap > 30
    assert costly == 0
