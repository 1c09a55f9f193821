"""Prefill requests (RequestKind.PREFILL: a prompt computed ahead of a completion) on a tiny real
model: they fill an idle engine only, give way to any other request within one step, never take
blocks from a running completion, and what they (or any stopped request) computed stays cached."""

from __future__ import annotations

import pytest
import torch

from inference.config import RequestKind, SamplingParams, SpecMode
from inference.engine.engine import LLMEngine
from inference.engine.sequence import FinishReason, Request
from inference.loading import LoadedModel
from tests.inference.engine.engine_helpers import make_engine, one_torch_thread, run_all, tiny_model

pytestmark = pytest.mark.usefixtures(one_torch_thread.__name__)
_ = one_torch_thread

BLOCK = 4  # make_engine's block size


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> LoadedModel:
    return tiny_model(tmp_path_factory.mktemp("prefill") / "tiny")


def _request(request_id: str, prompt_ids: list[int], kind: RequestKind, max_tokens: int = 6) -> Request:
    return Request(
        request_id,
        prompt_token_ids=prompt_ids,
        sampling=SamplingParams(max_tokens=1 if kind is RequestKind.PREFILL else max_tokens, ignore_eos=True),
        spec_mode=SpecMode.OFF,
        kind=kind,
    )


def _steps(engine: LLMEngine, count: int) -> list[list[str]]:
    """The ids of the requests each of `count` steps advanced (or finished)."""
    return [sorted(out.request_id for out in engine.step()) for _ in range(count)]


def test_a_completion_after_a_prefill_computes_only_the_last_token(model: LoadedModel) -> None:
    ids = list(range(100, 150))  # 50 tokens: 12 full blocks and 2 tokens
    engine = make_engine(model, background_prefill_chunk=8)
    prefill = run_all(engine, [_request("warm", ids, RequestKind.PREFILL)])["warm"]
    assert prefill.reason == FinishReason.LENGTH
    assert prefill.metrics.computed_tokens == 50
    assert prefill.metrics.target_forward_passes == 7  # 8-token chunks: six of 8 and one of 2
    done = run_all(engine, [_request("comp", ids, RequestKind.COMPLETION)])["comp"]
    # The prefill's last, partly filled block stayed cached: only the last token (for its logits) runs.
    assert (done.metrics.reused_tokens, done.metrics.computed_tokens) == (49, 1)
    cold = run_all(make_engine(model), [_request("cold", ids, RequestKind.COMPLETION)])["cold"]
    assert done.token_ids == cold.token_ids


def test_a_completion_arriving_during_a_prefill_runs_at_the_next_step(model: LoadedModel) -> None:
    prefill_ids, completion_ids = list(range(100, 180)), list(range(300, 320))
    engine = make_engine(model, background_prefill_chunk=8)
    engine.add_request(_request("warm", prefill_ids, RequestKind.PREFILL))
    engine.step()
    assert engine.scheduler.running[0].num_computed == 8
    engine.add_request(_request("comp", completion_ids, RequestKind.COMPLETION, max_tokens=3))
    # The completion reads its prompt at the next step and decodes; the prefill does no work meanwhile.
    outputs = [out for _ in range(3) for out in engine.step()]
    assert [out.request_id for out in outputs] == ["comp"] * 3
    assert outputs[0].metrics.target_forward_passes == 1 and outputs[0].token_ids
    assert outputs[-1].finish_reason == FinishReason.LENGTH and outputs[-1].metrics.preemptions == 0
    warm = engine.scheduler.running[0]
    assert warm.request_id == "warm" and warm.num_computed == 8
    res = run_all(engine, [])
    assert res["warm"].reason == FinishReason.LENGTH and res["warm"].metrics.computed_tokens == 80


def test_a_completion_arriving_mid_pass_stops_a_prefill_between_layers(model: LoadedModel) -> None:
    ids, completion_ids = list(range(100, 150)), list(range(300, 320))
    engine = make_engine(model, background_prefill_chunk=16)
    completion = _request("comp", completion_ids, RequestKind.COMPLETION, max_tokens=3)
    layers_run: list[int] = []

    def arrive_during_layer_zero(module: object, args: object) -> None:
        layers_run.append(0)
        if len(layers_run) == 1:  # during the prefill's first pass, as its first layer starts
            engine.add_request(completion)

    hook = model.model.model.layers[0].register_forward_pre_hook(arrive_during_layer_zero)
    try:
        engine.add_request(_request("warm", ids, RequestKind.PREFILL))
        assert engine.step() == []  # the pass stopped before layer 1: nothing advanced
        warm = engine.scheduler.running[0]
        assert warm.num_computed == 0 and warm.metrics.computed_tokens == 0
        assert len(layers_run) == 1
        res = run_all(engine, [])
    finally:
        hook.remove()
    # The completion ran next, alone, with the tokens it gets on an idle engine.
    assert res["comp"].metrics.target_forward_passes == 3
    assert res["comp"].token_ids == run_all(make_engine(model), [completion])["comp"].token_ids
    # The prefill redid the interrupted chunk: its KV is bit for bit that of a prefill never stopped.
    assert res["warm"].metrics.computed_tokens == 50
    done = run_all(engine, [_request("after", ids, RequestKind.COMPLETION)])["after"]
    calm = make_engine(model, background_prefill_chunk=16)
    run_all(calm, [_request("warm", ids, RequestKind.PREFILL)])
    same = run_all(calm, [_request("after", ids, RequestKind.COMPLETION)])["after"]
    assert done.metrics.reused_tokens == 49 and done.token_ids == same.token_ids
    assert torch.equal(torch.stack(done.logits), torch.stack(same.logits))


def test_a_pass_with_a_completion_in_it_is_never_interrupted(model: LoadedModel) -> None:
    engine = make_engine(model)
    arrivals = iter([_request("late", list(range(400, 410)), RequestKind.COMPLETION, max_tokens=2)])

    def arrive(module: object, args: object) -> None:
        late = next(arrivals, None)
        if late is not None:
            engine.add_request(late)

    hook = model.model.model.layers[0].register_forward_pre_hook(arrive)
    try:
        engine.add_request(_request("first", list(range(100, 120)), RequestKind.COMPLETION, max_tokens=2))
        outputs = engine.step()
    finally:
        hook.remove()
    assert [out.request_id for out in outputs] == ["first"] and outputs[0].token_ids


def test_a_generation_also_pauses_a_prefill(model: LoadedModel) -> None:
    engine = make_engine(model, background_prefill_chunk=8)
    engine.add_request(_request("warm", list(range(100, 180)), RequestKind.PREFILL))
    engine.step()
    engine.add_request(_request("gen", list(range(300, 310)), RequestKind.GENERATION, max_tokens=2))
    assert _steps(engine, 2) == [["gen"], ["gen"]]
    assert run_all(engine, [])["warm"].metrics.computed_tokens == 80


def test_a_prefill_into_a_full_pool_never_takes_blocks_from_a_running_completion(
    model: LoadedModel,
) -> None:
    engine = make_engine(model, num_blocks=12)  # 48 tokens in all
    completion = _request("comp", list(range(100, 128)), RequestKind.COMPLETION, max_tokens=12)
    solo = run_all(make_engine(model), [completion])["comp"].token_ids
    engine.add_request(completion)
    early = [t for out in engine.step() for t in out.token_ids]  # it holds 8 of 12 blocks, grows to 10
    engine.add_request(_request("warm", list(range(200, 230)), RequestKind.PREFILL))  # needs 8 blocks
    res = run_all(engine, [])
    assert early + res["comp"].token_ids == solo and res["comp"].metrics.preemptions == 0
    assert engine.stats().preemptions == 0
    # The prefill waited for the completion's blocks, then ran whole.
    assert res["warm"].reason == FinishReason.LENGTH and res["warm"].metrics.computed_tokens == 30


def test_a_completion_into_a_full_pool_takes_the_blocks_of_a_running_prefill(model: LoadedModel) -> None:
    engine = make_engine(model, num_blocks=12, background_prefill_chunk=8)
    engine.add_request(_request("warm", list(range(200, 240)), RequestKind.PREFILL))  # 10 blocks
    engine.step()
    engine.add_request(_request("comp", list(range(100, 120)), RequestKind.COMPLETION, max_tokens=4))
    first = {out.request_id: out for out in engine.step()}
    assert first["comp"].token_ids  # admitted and answered at once: the prefill gave way
    assert "warm" not in engine.kv and engine.stats().preemptions == 1
    res = run_all(engine, [])
    assert res["comp"].reason == FinishReason.LENGTH
    # Readmitted later, the prefill reused the full blocks it had computed (8 tokens: 2 blocks).
    assert res["warm"].reason == FinishReason.LENGTH and res["warm"].metrics.preemptions == 1


@pytest.mark.parametrize("kind", [RequestKind.COMPLETION, RequestKind.PREFILL])
def test_a_stopped_request_keeps_the_full_blocks_it_computed(model: LoadedModel, kind: RequestKind) -> None:
    ids = list(range(100, 150))
    engine = make_engine(model, prefill_chunk=8, max_step_tokens=8, background_prefill_chunk=8)
    engine.add_request(_request("abandoned", ids, kind))
    _steps(engine, 3)  # 24 tokens computed
    engine.abort("abandoned")
    engine.step()
    engine.check_invariants()
    nxt = run_all(engine, [_request("next", [*ids[:30], 7, 7, 7], RequestKind.COMPLETION)])["next"]
    assert (nxt.metrics.reused_tokens, nxt.metrics.computed_tokens) == (24, 9)
