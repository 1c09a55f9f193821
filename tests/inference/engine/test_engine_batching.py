"""Batching: concurrent requests share forward passes (prefill chunks and plain decode steps of all
running requests in one pass), and each request's output is token for token what it gives alone,
on the embedded model and on a tiny random one, cold and from the prefix cache."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
import torch

from inference.config import SamplingParams, SpecMode
from inference.defaults import default_model_dir
from inference.engine.engine import LLMEngine
from inference.engine.model_runner import ForwardRows, ModelRunner
from inference.engine.sequence import Request
from inference.loading import LoadedModel, load_model
from tests.inference.engine.engine_helpers import (
    PROMPTS,
    Finished,
    make_engine,
    observe_logits,
    one_torch_thread,
    run_all,
    tiny_model,
)

__all__ = ["one_torch_thread"]

MAX_TOKENS = 24


@pytest.fixture(scope="module", params=["embedded", "random"])
def model(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, one_torch_thread: None
) -> LoadedModel:
    if request.param == "embedded":
        return load_model(default_model_dir(), device="cpu", dtype=torch.float32)
    return tiny_model(tmp_path_factory.mktemp("batching") / "tiny", seed=5)


def _requests(model: LoadedModel) -> list[Request]:
    prompts = [*PROMPTS, "def parse(line):\n    key, _, value = line.partition('=')\n" * 4]
    greedy = SamplingParams(max_tokens=MAX_TOKENS, ignore_eos=True)
    requests = [
        Request(f"r{i}", prompt_token_ids=model.tokenizer.encode(p), sampling=greedy, spec_mode=SpecMode.OFF)
        for i, p in enumerate(prompts)
    ]
    sampled = SamplingParams(max_tokens=MAX_TOKENS, ignore_eos=True, temperature=0.8, top_p=0.95, seed=11)
    requests.append(Request("sampled", prompt=PROMPTS[0], sampling=sampled, spec_mode=SpecMode.OFF))
    repeat = "items = [1, 2, 3]\nfor item in items:\n    print(item)\n" * 3
    requests.append(Request("ngram", prompt=repeat, sampling=greedy, spec_mode=SpecMode.NGRAM))
    return requests


def _recording_batches(engine: LLMEngine) -> list[list[int]]:
    """Rows per part of every batched pass the engine's target runs from now on."""
    batches: list[list[int]] = []
    forward_batch = engine.target.forward_batch

    def recorded(
        parts: Sequence[ForwardRows], interrupt: Callable[[], bool] | None = None
    ) -> list[torch.Tensor]:
        batches.append([len(part.token_ids) for part in parts])
        return forward_batch(parts, interrupt)

    engine.target.forward_batch = recorded  # type: ignore[method-assign]
    return batches


def _staggered(engine: LLMEngine, requests: list[Request]) -> dict[str, Finished]:
    """Start one request per step (so prompts are read while others decode), then run them all."""
    results = {r.request_id: Finished() for r in requests}
    observe_logits(engine, lambda request_id, row: results[request_id].logits.append(row))
    pending = list(requests)
    while pending or engine.has_work():
        if pending:
            engine.add_request(pending.pop(0))
        for out in engine.step():
            result = results[out.request_id]
            result.outputs.append(out)
            result.text += out.delta
            result.token_ids += out.token_ids
        engine.check_invariants()
    assert all(r.outputs and r.last.finished for r in results.values())
    return results


def _alone(new_engine: Callable[[], LLMEngine], requests: list[Request]) -> dict[str, Finished]:
    """Each request through an engine of its own."""
    return {r.request_id: run_all(new_engine(), [r])[r.request_id] for r in requests}


def _assert_same(alone: dict[str, Finished], together: dict[str, Finished]) -> None:
    for request_id, expected in alone.items():
        got = together[request_id]
        assert (got.token_ids, got.text) == (expected.token_ids, expected.text), request_id
        assert len(got.token_ids) == MAX_TOKENS
        for a, b in zip(expected.logits, got.logits, strict=True):
            torch.testing.assert_close(a, b, rtol=0, atol=1e-4)


def test_concurrent_requests_share_passes_and_give_their_output_alone(model: LoadedModel) -> None:
    requests = _requests(model)
    alone = _alone(lambda: make_engine(model, prefill_chunk=16, max_step_tokens=32), requests)
    engine = make_engine(model, prefill_chunk=16, max_step_tokens=32)
    batches = _recording_batches(engine)
    together = _staggered(engine, requests)
    _assert_same(alone, together)
    assert max(len(b) for b in batches) == len(requests)  # a pass with every request in it
    assert any(len(b) > 1 and max(b) > 1 and 1 in b for b in batches)  # a prompt chunk beside decodes
    passes = sum(r.metrics.target_forward_passes for r in together.values())
    assert len(batches) < passes / 3  # the passes were shared


def test_cache_hits_in_a_batch_equal_cold_runs_alone(model: LoadedModel) -> None:
    requests = _requests(model)[:5]
    cold = _alone(lambda: make_engine(model, enable_prefix_cache=False), requests)
    engine = make_engine(model)
    for request in requests:  # fill the prefix cache, one at a time
        run_all(engine, [Request(f"warm-{request.request_id}", prompt_token_ids=request.prompt_token_ids)])
    hits = run_all(engine, requests)
    assert all(r.metrics.reused_tokens > 0 for r in hits.values())
    _assert_same(cold, hits)
    engine.check_invariants()


def test_forward_batch_equals_one_sequence_at_a_time(model: LoadedModel) -> None:
    """The runner alone: three sequences (a prompt chunk after a cached prefix, a fresh prompt and a
    decode step) in one pass give the logits and K/V of three separate passes."""
    block = 8
    ids = [model.tokenizer.encode(p) for p in PROMPTS[:3]]

    def run(batched: bool) -> tuple[list[torch.Tensor], ModelRunner]:
        runner = ModelRunner(model.model, 128, block, torch.device("cpu"), torch.float32)
        tables = [list(range(0, 32)), list(range(90, 58, -1)), list(range(96, 128))]

        def rows(i: int, start: int, end: int, logits: int) -> ForwardRows:
            table = tables[i]
            slots = [table[p // block] * block + p % block for p in range(start, end)]
            return ForwardRows(ids[i][start:end], start, table, slots, logits)

        runner.forward_batch([rows(0, 0, 8, 0), rows(2, 0, len(ids[2]) - 1, 0)])  # cached prefixes
        parts = [
            rows(0, 8, len(ids[0]), 2),
            rows(1, 0, len(ids[1]), 1),
            rows(2, len(ids[2]) - 1, len(ids[2]), 1),
        ]
        if batched:
            return runner.forward_batch(parts), runner
        return [runner.forward_batch([part])[0] for part in parts], runner

    together, batched_runner = run(True)
    alone, single_runner = run(False)
    for a, b in zip(alone, together, strict=True):
        assert a.shape == b.shape
        torch.testing.assert_close(a, b, rtol=0, atol=1e-5)
        assert torch.equal(a.argmax(-1), b.argmax(-1))
    for a, b in zip(
        single_runner.kv.k + single_runner.kv.v, batched_runner.kv.k + batched_runner.kv.v, strict=True
    ):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-5)
