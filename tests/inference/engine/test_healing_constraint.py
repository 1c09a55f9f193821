"""Token healing, engine side: constrained first tokens, the text starts at the cursor, and the prefix
cache and speculative decoding stay exact."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from inference.config import SamplingParams, SpecMode
from inference.engine.healing_constraint import HealingConstraint
from inference.engine.sequence import Request
from inference.loading import LoadedModel
from inference.prompts.token_boundary import PROBES, HealedPrompt, heal_prompt, token_boundaries
from inference.prompts.vocabulary import vocabulary_index
from tests.inference.engine.engine_helpers import (
    make_engine,
    one_torch_thread,
    run_all,
    tiny_k_quant_model,
    tiny_model,
)

transformers = pytest.importorskip("transformers")

__all__ = ["one_torch_thread"]

CURSORS = [
    "def area(width, height):\n    ",  # newline + indentation
    "def area(width, height):\n    retu",  # half an identifier
    "def area(width, height):\n    if width =",  # half an operator
    'def greet(name):\n    print("hello wor',  # inside a string
]
MAX_TOKENS = 12


@pytest.fixture(scope="module", params=["float32", "q4_k_native"])
def target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, one_torch_thread: None
) -> LoadedModel:
    """The float checkpoint, and a K-quant GGUF served in its own blocks (every form keeps healing)."""
    if request.param == "q4_k_native":
        return tiny_k_quant_model(tmp_path_factory.mktemp("heal-target-k"), seed=3)
    return tiny_model(tmp_path_factory.mktemp("heal-target"), seed=3)


@pytest.fixture(scope="module")
def draft(tmp_path_factory: pytest.TempPathFactory, one_torch_thread: None) -> LoadedModel:
    return tiny_model(tmp_path_factory.mktemp("heal-draft"), seed=4)


def _healed(target: LoadedModel, prompt: str) -> HealedPrompt:
    healed = heal_prompt(target.tokenizer, target.tokenizer.encode(prompt))
    assert healed.removed, prompt
    return healed


def _request(healed: HealedPrompt, rid: str, spec: SpecMode = SpecMode.OFF, **sampling: object) -> Request:
    params = SamplingParams(max_tokens=MAX_TOKENS, **sampling)  # type: ignore[arg-type]
    return Request(
        rid, prompt_token_ids=healed.token_ids, sampling=params, spec_mode=spec, healing=healed.removed
    )


def _brute_force_reference(path: Path, target: LoadedModel, healed: HealedPrompt, steps: int) -> list[int]:
    """Greedy decoding by transformers over the whole sequence at every step; while the removed text
    is not reproduced, the argmax is taken over the tokens whose decoded text, after the output so
    far, agrees with it, found by decoding every token of the vocabulary. When the removed text ends
    with blanks, the character after it may not be one more blank. A token that ends inside the
    removed text must end where the tokenizer ends one in the removed text followed by a probe."""
    model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    tokenizer = target.tokenizer
    removed = healed.removed.decode()
    blank_end = removed.endswith((" ", "\t"))
    ends = set()
    for probe in PROBES:
        ids = tokenizer.encode(removed + probe)
        ends |= {len(tokenizer.decode(ids[:n])) for n in range(1, len(ids))}
    special = {tokenizer.token_id(t) for t in tokenizer.special_tokens}
    out: list[int] = []
    for _ in range(steps):
        with torch.no_grad():
            logits = model(torch.tensor([healed.token_ids + out])).logits[0, -1]
        done = tokenizer.decode(out)
        if len(done) < len(removed) or (blank_end and done == removed):
            allowed = []
            for token in range(tokenizer.vocab_size):
                text = tokenizer.decode([*out, token])
                if (
                    token not in special
                    and (text.startswith(removed) or removed.startswith(text))
                    and text != done
                    and (len(text) >= len(removed) or len(text) in ends)
                    and not (blank_end and text[len(removed) : len(removed) + 1] in (" ", "\t"))
                ):
                    allowed.append(token)
            masked = torch.full_like(logits, float("-inf"))
            masked[allowed] = logits[allowed]
            logits = masked
        out.append(int(logits.argmax()))
    return out


def _outputs(
    target: LoadedModel, requests: list[Request], **config: object
) -> dict[str, tuple[list[int], str]]:
    engine = make_engine(target, **config)  # type: ignore[arg-type]
    done = run_all(engine, requests)
    return {rid: (f.token_ids, f.text) for rid, f in done.items()}


@pytest.mark.parametrize("prompt", CURSORS)
def test_greedy_with_healing_equals_a_brute_force_reference(target: LoadedModel, prompt: str) -> None:
    healed = _healed(target, prompt)
    engine = make_engine(target)
    finished = run_all(engine, [_request(healed, "r", ignore_eos=True)])["r"]
    # A GGUF target: transformers reads the float32 weights it holds (`tiny_k_quant_model`).
    folder = target.path.parent / "reference" if target.path.suffix == ".gguf" else target.path
    expected = _brute_force_reference(folder, target, healed, MAX_TOKENS)
    assert finished.token_ids == expected
    full = target.tokenizer.decode(expected)
    # The output reproduces the removed text, and the stream shows only what comes after the cursor.
    assert full.startswith(healed.removed.decode())
    assert finished.text == full[len(healed.removed.decode()) :]


def test_after_blanks_the_constraint_bars_one_more_blank(target: LoadedModel) -> None:
    """A cursor after the line's indentation: the first tokens reproduce it but may not go on with a
    blank, and the token right after an exact reproduction may not start with one either."""
    index = vocabulary_index(target.tokenizer)
    removed = b"\n    "
    constraint = HealingConstraint(index, removed)
    rule = constraint.next_tokens([])
    assert rule is not None and rule[1]
    expected = {
        i
        for i, data in enumerate(index.token_bytes)
        if data
        and (removed.startswith(data) or data.startswith(removed))
        and data[len(removed) : len(removed) + 1] not in (b" ", b"\t")
    }
    assert set(rule[0].tolist()) == expected
    exact = target.tokenizer.encode("\n    ")
    assert index.bytes_of(exact) == removed
    rule = constraint.next_tokens(exact)
    assert rule is not None and not rule[1]
    assert set(rule[0].tolist()) == {
        i for i, data in enumerate(index.token_bytes) if data and data[:1] in (b" ", b"\t")
    }
    word = target.tokenizer.encode("\n    x")
    assert constraint.next_tokens(word) is None
    # Logits that favour one more space pick the best token without it.
    space = target.tokenizer.encode(" ")[-1]
    logits = torch.zeros(1, index.size)
    logits[0, space] = 10.0
    assert int(constraint.mask(logits, exact)[0].argmax()) != space
    assert int(constraint.mask(logits, word)[0].argmax()) == space  # past the rule: unchanged
    # Text that does not end with a blank has no such rule.
    assert HealingConstraint(index, b" retu").next_tokens(target.tokenizer.encode(" retu")) is None


def test_inside_the_removed_text_a_token_ends_only_where_the_tokenizer_ends_one(
    target: LoadedModel,
) -> None:
    """An eight-space indentation: newline + three spaces (a token of a four-space indentation) is a
    prefix of it, but the tokenizer never ends a token there, so the model is not asked to go on
    from it; newline + seven spaces, where the tokenizer ends one, stays."""
    index = vocabulary_index(target.tokenizer)
    removed = b"\n        "
    three = target.tokenizer.encode("\n    x")[0]
    seven = target.tokenizer.encode("\n        x")[0]
    assert index.bytes_of([three]) == b"\n   " and index.bytes_of([seven]) == b"\n       "
    constraint = HealingConstraint(index, removed, token_boundaries(target.tokenizer, removed))
    rule = constraint.next_tokens([])
    assert rule is not None and rule[1]
    assert seven in rule[0].tolist() and three not in rule[0].tolist()
    logits = torch.zeros(1, index.size)
    logits[0, three], logits[0, seven] = 10.0, 5.0
    assert int(constraint.mask(logits, [])[0].argmax()) == seven
    # Without boundaries any prefix of the removed text may end a token.
    assert int(HealingConstraint(index, removed).mask(logits, [])[0].argmax()) == three


def test_a_stop_string_inside_the_removed_text_does_not_end_the_suggestion(target: LoadedModel) -> None:
    healed = _healed(target, CURSORS[0])  # removed text "\n    "
    stopped = _outputs(target, [_request(healed, "s", stop=("\n",), ignore_eos=True)])["s"]
    free = _outputs(target, [_request(healed, "f", ignore_eos=True)])["f"]
    assert free[1].split("\n")[0] == stopped[1]
    assert len(stopped[0]) == MAX_TOKENS  # the reproduced "\n" did not stop it


def test_healing_off_and_on_differ_in_what_the_model_is_shown(target: LoadedModel) -> None:
    prompt = CURSORS[1]
    healed = _healed(target, prompt)
    plain = Request("plain", prompt=prompt, sampling=SamplingParams(max_tokens=MAX_TOKENS, ignore_eos=True))
    shown = target.tokenizer.encode(prompt)
    assert healed.token_ids == shown[: len(healed.token_ids)] and len(healed.token_ids) < len(shown)
    results = _outputs(target, [plain, _request(healed, "healed", ignore_eos=True)])
    assert results["healed"][0][0] != results["plain"][0][0]
    assert results["healed"][1] != results["plain"][1]


@pytest.mark.parametrize("prompt", CURSORS)
def test_cache_hit_equals_miss_with_healing(target: LoadedModel, prompt: str) -> None:
    healed = _healed(target, prompt)
    engine = make_engine(target)
    miss = run_all(engine, [_request(healed, "miss", ignore_eos=True)])["miss"]
    hit = run_all(engine, [_request(healed, "hit", ignore_eos=True)])["hit"]
    # All but the last prompt token, which is fed again for its logits.
    assert hit.metrics.reused_tokens == len(healed.token_ids) - 1
    assert miss.metrics.reused_tokens == 0
    assert (hit.token_ids, hit.text) == (miss.token_ids, miss.text)


def test_typing_on_the_line_reuses_the_healed_prompt(target: LoadedModel) -> None:
    head = "class Box:\n    def area(self, height):\n"
    engine = make_engine(target)
    reused = []
    for typed in ("        ret", "        retu", "        retur", "        return"):
        healed = heal_prompt(target.tokenizer, target.tokenizer.encode(head + typed))
        done = run_all(engine, [_request(healed, typed, ignore_eos=True)])[typed]
        reused.append((done.metrics.reused_tokens, len(healed.token_ids)))
    # Each healed prompt has 18 tokens; after the first, all but the last one are reused.
    assert reused == [(0, 18), (17, 18), (17, 18), (17, 18)]


@pytest.mark.parametrize("spec", [SpecMode.NGRAM, SpecMode.DRAFT])
def test_speculative_greedy_with_healing_equals_plain(
    target: LoadedModel, draft: LoadedModel, spec: SpecMode
) -> None:
    proposed = 0
    for prompt in CURSORS:
        # The cursor's text appears earlier in the prompt too, so prompt lookup finds n-grams to propose.
        healed = _healed(target, f"{prompt} x\n{prompt}")
        plain = _outputs(target, [_request(healed, "p", ignore_eos=True)])["p"]
        engine = make_engine(target, draft)
        done = run_all(engine, [_request(healed, "s", spec, ignore_eos=True)])["s"]
        proposed += done.metrics.spec_proposed
        assert (done.token_ids, done.text) == plain, prompt
    assert proposed > 0


def test_sampled_output_with_healing_reproduces_the_removed_text(target: LoadedModel) -> None:
    healed = _healed(target, CURSORS[2])
    for seed in range(5):
        request = _request(healed, f"s{seed}", SpecMode.NGRAM, temperature=1.5, seed=seed, ignore_eos=True)
        ids, text = _outputs(target, [request])[f"s{seed}"]
        full = target.tokenizer.decode(ids)
        assert full.startswith(healed.removed.decode()) and text == full[len(healed.removed.decode()) :]


@pytest.fixture(autouse=True)
def _no_grad() -> Iterator[None]:
    with torch.no_grad():
        yield
