"""The engine on a tiny real model (CPU): cache hits equal cold runs, exact reuse counts, streaming,
stop conditions, fairness, abort, and a full pool."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from inference.config import RequestKind, SamplingParams, SpecMode
from inference.engine.errors import InvalidRequestError, ResourceExhaustedError, StepFailedError
from inference.engine.sequence import FinishReason, Request
from inference.loading import LoadedModel
from tests.fixtures.devices import logits_atol, on_cuda
from tests.fixtures.failing_model import FailingModel
from tests.inference.engine.engine_helpers import PROMPTS, make_engine, one_torch_thread, run_all, tiny_model

pytestmark = pytest.mark.usefixtures(one_torch_thread.__name__)
_ = one_torch_thread  # the fixture must be importable under its name in this module


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> LoadedModel:
    return tiny_model(tmp_path_factory.mktemp("engine") / "tiny")


def greedy(request_id: str, prompt_ids: list[int], max_tokens: int = 12, **kw: object) -> Request:
    return Request(
        request_id,
        prompt_token_ids=prompt_ids,
        sampling=SamplingParams(max_tokens=max_tokens, ignore_eos=True),
        spec_mode=SpecMode.OFF,
        **kw,  # type: ignore[arg-type]
    )


def test_cache_hit_gives_the_cold_output_and_logits(model: LoadedModel) -> None:
    _assert_cache_hit_gives_the_cold_output(model)


@pytest.mark.parametrize(
    "dtype", [on_cuda(torch.float32, id="float32"), on_cuda(torch.bfloat16, id="bfloat16")]
)
def test_cache_hit_gives_the_cold_output_on_a_gpu(dtype: torch.dtype, tmp_path: Path) -> None:
    _assert_cache_hit_gives_the_cold_output(tiny_model(tmp_path / "tiny", device="cuda", dtype=dtype))


def _assert_cache_hit_gives_the_cold_output(model: LoadedModel) -> None:
    ids = model.tokenizer.encode(PROMPTS[1])
    assert len(ids) > 12
    cold_engine = make_engine(model, enable_prefix_cache=False)
    cold = run_all(cold_engine, [greedy("cold", ids)])["cold"]
    engine = make_engine(model)
    first = run_all(engine, [greedy("a", ids)])["a"]
    again = run_all(engine, [greedy("b", ids)])["b"]
    assert first.metrics.reused_tokens == 0
    # Every token but the last: whole blocks, then the first rows of the block that holds the last token.
    assert again.metrics.reused_tokens == len(ids) - 1
    assert again.metrics.computed_tokens == len(ids) - again.metrics.reused_tokens
    assert cold.token_ids == first.token_ids == again.token_ids
    assert len(again.logits) == 12
    for a, b in zip(cold.logits, again.logits, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=logits_atol(model.device, model.dtype))
    engine.check_invariants()


def test_edit_recomputes_only_from_the_edit(model: LoadedModel) -> None:
    engine = make_engine(model)
    ids = list(range(10, 50))  # 40 tokens, 10 blocks of 4
    run_all(engine, [greedy("orig", ids, max_tokens=3)])
    cold_engine = make_engine(model, enable_prefix_cache=False)
    for p in (17, 16, 3, 39):
        edited = list(ids)
        edited[p] = 999
        res = run_all(engine, [greedy(f"edit{p}", edited, max_tokens=3)])[f"edit{p}"]
        # Every token before the edit, whole blocks and the first rows of the edited block alike.
        assert res.metrics.reused_tokens == p
        assert res.metrics.computed_tokens == 40 - p
        cold = run_all(cold_engine, [greedy(f"cold{p}", edited, max_tokens=3)])[f"cold{p}"]
        assert res.token_ids == cold.token_ids
        for a, b in zip(cold.logits, res.logits, strict=True):
            torch.testing.assert_close(a, b, rtol=0, atol=1e-5)
    # Typing appends: the original prompt plus its 3 generated tokens is cached too.
    orig = run_all(engine, [greedy("again", ids, max_tokens=3)])["again"]
    longer = ids + orig.token_ids + [7, 8]
    res = run_all(engine, [greedy("typed", longer, max_tokens=1)])["typed"]
    # 42 tokens were computed: the 10 full blocks and the 2 computed rows of the next one are reused.
    assert res.metrics.reused_tokens == 42
    engine.check_invariants()


def test_chunked_prefill_matches_one_shot(model: LoadedModel) -> None:
    ids = model.tokenizer.encode(PROMPTS[2])
    one = run_all(make_engine(model), [greedy("one", ids)])["one"]
    chunked_engine = make_engine(model, prefill_chunk=5, max_step_tokens=5)
    chunked = run_all(chunked_engine, [greedy("chunk", ids)])["chunk"]
    assert one.token_ids == chunked.token_ids
    assert chunked.metrics.target_forward_passes == -(-len(ids) // 5) + 11
    torch.testing.assert_close(one.logits[0], chunked.logits[0], rtol=0, atol=1e-5)


def test_streamed_text_equals_decoded_tokens_and_stops(model: LoadedModel) -> None:
    engine = make_engine(model)
    text_request = Request("t", prompt=PROMPTS[0], sampling=SamplingParams(max_tokens=20, ignore_eos=True))
    res = run_all(engine, [text_request])["t"]
    assert res.reason == FinishReason.LENGTH
    assert res.metrics.generated_tokens == 20
    assert res.text == model.tokenizer.decode(res.token_ids)
    assert len(res.outputs) >= 2  # streamed, not one lump
    assert res.metrics.time_to_first_token is not None and res.metrics.time_to_first_token > 0
    # A stop string taken from the middle of that output ends the text right before it.
    stop = res.text[5:8]
    assert stop and stop not in res.text[: 5 + 2]
    stop_request = Request("s", prompt=PROMPTS[0], sampling=SamplingParams(max_tokens=20, stop=(stop,)))
    stopped = run_all(engine, [stop_request])["s"]
    assert stopped.reason == FinishReason.STOP
    assert stopped.text == res.text[: res.text.index(stop)]
    # A stop token ends it without emitting that token.
    token_request = greedy("k", model.tokenizer.encode(PROMPTS[0]), max_tokens=20)
    token_request.sampling.stop_token_ids = (res.token_ids[3],)
    by_token = run_all(engine, [token_request])["k"]
    assert by_token.reason == FinishReason.STOP
    assert by_token.token_ids == res.token_ids[: res.token_ids.index(res.token_ids[3])]
    engine.check_invariants()


def test_eos_finishes(model: LoadedModel) -> None:
    engine = make_engine(model)
    ids = model.tokenizer.encode(PROMPTS[3])
    probe = run_all(engine, [greedy("p", ids, max_tokens=4)])["p"]
    engine.eos_ids = engine.runner.eos_ids = frozenset({probe.token_ids[1]})
    req = greedy("e", ids, max_tokens=4)
    req.sampling.ignore_eos = False
    res = run_all(engine, [req])["e"]
    assert res.reason == FinishReason.EOS
    assert res.token_ids == probe.token_ids[:1]
    assert res.metrics.generated_tokens == 2


def test_interleaving_priority_and_abort(model: LoadedModel) -> None:
    engine = make_engine(model, prefill_chunk=8, max_step_tokens=8)
    ids = model.tokenizer.encode(PROMPTS[2])
    gen = greedy("gen", ids, max_tokens=30, kind=RequestKind.GENERATION)
    engine.add_request(gen)
    for _ in range(-(-len(ids) // 8) + 2):
        engine.step()
    comp = greedy("comp", model.tokenizer.encode(PROMPTS[0]), max_tokens=30)
    engine.add_request(comp)
    seen: list[list[str]] = []
    for _ in range(4):
        seen.append(sorted(o.request_id for o in engine.step()))
    # While the completion reads its prompt the generation waits; then both advance every step.
    assert seen[0] == [] and seen[1:] != [] and ["comp", "gen"] in seen
    engine.abort("gen")
    outs = {o.request_id: o for o in engine.step()}
    assert outs["gen"].finished and outs["gen"].finish_reason == FinishReason.CANCELLED
    assert not outs["comp"].finished
    engine.check_invariants()
    assert "gen" not in engine.kv
    engine.abort("comp")
    engine.step()
    assert not engine.has_work()
    engine.check_invariants()
    assert engine.kv.pool.num_free == engine.kv.pool.num_blocks


def test_full_pool_preempts_then_fails_only_what_cannot_fit(model: LoadedModel) -> None:
    ids = list(range(100, 130))
    requests = [
        greedy("hog", ids, max_tokens=12, kind=RequestKind.GENERATION),  # 42 tokens: 11 blocks
        greedy("small", ids[:6], max_tokens=12),  # 18 tokens: 5 blocks
        greedy("late", list(range(200, 220)), max_tokens=30),  # 50 tokens: more than the pool
    ]
    solo = {r.request_id: run_all(make_engine(model), [r])[r.request_id] for r in requests[:2]}
    engine = make_engine(model, num_blocks=12)  # 48 tokens in all
    with pytest.raises(ResourceExhaustedError, match="does not fit the KV pool"):
        engine.add_request(greedy("huge", list(range(60))))
    engine.add_request(requests[0])
    early = [t for _ in range(3) for out in engine.step() for t in out.token_ids]
    res = run_all(engine, requests[1:])
    res["hog"].token_ids[:0] = early
    # The generation gave its blocks to the completion, recomputed later, and still decoded exactly.
    assert res["hog"].metrics.preemptions == 1
    assert engine.stats().preemptions == sum(r.metrics.preemptions for r in res.values())  # GetStats
    for name in ("hog", "small"):
        assert res[name].reason == FinishReason.LENGTH
        assert res[name].token_ids == solo[name].token_ids
    assert res["late"].reason == FinishReason.ERROR
    assert isinstance(res["late"].last.error, ResourceExhaustedError)
    assert "KV cache full" in str(res["late"].last.error)
    engine.check_invariants()
    after = run_all(engine, [greedy("after", ids[:10], max_tokens=4)])["after"]
    assert after.reason == FinishReason.LENGTH
    engine.check_invariants()


def test_completion_takes_blocks_from_a_running_generation(model: LoadedModel) -> None:
    gen = greedy("gen", list(range(300, 330)), max_tokens=14, kind=RequestKind.GENERATION)  # 11 blocks
    comp = greedy("comp", list(range(400, 422)), max_tokens=4)  # 6 blocks for its prompt
    solo = run_all(make_engine(model), [gen])["gen"].token_ids
    engine = make_engine(model, num_blocks=13)
    engine.add_request(gen)
    early = [t for _ in range(2) for out in engine.step() for t in out.token_ids]
    assert engine.kv.pool.num_free == 5  # too few for the completion's 6
    engine.add_request(comp)
    first = {out.request_id: out for out in engine.step()}
    assert first["comp"].token_ids  # admitted and answered at once: the generation gave way
    assert "gen" not in engine.kv
    res = run_all(engine, [])
    assert res["comp"].reason == res["gen"].reason == FinishReason.LENGTH
    assert res["gen"].metrics.preemptions == 1
    assert early + res["gen"].token_ids == solo
    engine.check_invariants()


def test_bad_requests_are_refused(model: LoadedModel) -> None:
    engine = make_engine(model)
    with pytest.raises(InvalidRequestError, match="top_p"):
        engine.add_request(Request("a", prompt="x", sampling=SamplingParams(top_p=0.0)))
    with pytest.raises(InvalidRequestError, match="empty"):
        engine.add_request(Request("b", prompt_token_ids=[]))
    with pytest.raises(InvalidRequestError, match="limit is 511"):
        engine.add_request(Request("c", prompt_token_ids=[1] * 600))
    with pytest.raises(InvalidRequestError, match=r"\[0, 1024\)"):
        engine.add_request(Request("d", prompt_token_ids=[5000]))
    engine.add_request(Request("e", prompt_token_ids=[1, 2]))
    with pytest.raises(InvalidRequestError, match="already running"):
        engine.add_request(Request("e", prompt_token_ids=[1, 2]))
    engine.abort("e")
    engine.step()
    engine.check_invariants()


def test_a_failing_step_ends_every_live_request_and_frees_their_blocks(model: LoadedModel) -> None:
    poison = 7
    engine = make_engine(model)
    engine.target.model = FailingModel(model.model, poison)
    ids = [i for i in model.tokenizer.encode(PROMPTS[0]) if i != poison]
    engine.add_request(greedy("running", ids, max_tokens=50))
    engine.step()
    engine.add_request(greedy("queued", ids[:5]))  # arrives in the failing step
    engine.add_request(greedy("poisoned", [*ids[:3], poison]))
    res = run_all(engine, [])
    for name in ("running", "queued", "poisoned"):
        assert res[name].reason == FinishReason.ERROR
        assert isinstance(res[name].last.error, StepFailedError)
        assert "PoisonedTokenError" in str(res[name].last.error)
    assert engine.kv.pool.num_free == engine.kv.pool.num_blocks
    again = run_all(engine, [greedy("after", ids)])["after"]
    assert again.reason == FinishReason.LENGTH and len(again.token_ids) == 12
