"""Shared helpers of the engine tests: tiny engines and a loop that runs requests to the end."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch

from inference.config import EngineConfig, SamplingParams, SpecMode
from inference.engine.engine import LLMEngine
from inference.engine.sequence import FinishReason, Request, RequestMetrics, RequestOutput, Sequence
from inference.loading import LoadedModel, load_model
from tests.fixtures.devices import logits_atol
from tests.fixtures.tiny_models import make_tiny_checkpoint

PROMPTS = [
    "def fibonacci(n):\n    if n < 2:\n        return n\n",
    "import json\n\nclass Encoder(json.JSONEncoder):\n    def default(self, obj):\n",
    "x = [i * i for i in range(10)]\nprint(x)\n" * 3,
    "The quick brown fox",
]


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """Tiny matrices on a shared 2-core machine: one intra-op thread is 10x faster than two that
    spin against other processes. Restored afterwards for the other test modules."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def tiny_model(
    directory: Path,
    seed: int = 0,
    device: str = "cpu",
    dtype: torch.dtype = torch.float32,
    **overrides: object,
) -> LoadedModel:
    """A tiny llama checkpoint written to `directory` and loaded on `device` (the CPU) in `dtype`."""
    make_tiny_checkpoint(directory, "llama", seed=seed, **overrides)
    return load_model(directory, device=device, dtype=dtype)


def tiny_k_quant_model(directory: Path, seed: int = 0, weights: str = "native") -> LoadedModel:
    """A tiny llama written as a GGUF file in Q4_K with v and down projections in Q6_K (as llama.cpp's
    Q4_K_M), rows of 256 (one K block), served in the `weights` form (native or native_q8) on the CPU;
    beside it `directory / "reference"`, a Hugging Face folder holding the float32 weights the file
    stands for."""
    from gguf import GGMLQuantizationType as Q

    from tests.fixtures.tiny_gguf import with_weights, write_gguf

    # initializer_range 0.02: at this width, small weights make the output echo the prompt, so
    # prompt lookup has proposals to accept.
    shape = {"hidden_size": 256, "head_dim": 64, "intermediate_size": 512, "initializer_range": 0.02}
    checkpoint = make_tiny_checkpoint(directory / "checkpoint", "llama", seed=seed, **shape)
    mix = {".v_proj.": Q.Q6_K, ".down_proj.": Q.Q6_K}
    held = write_gguf(checkpoint, directory / "model.gguf", Q.Q4_K, types=mix, seed=seed)
    with_weights(checkpoint, held, directory / "reference")  # the float32 weights the file holds
    loaded = load_model(directory / "model.gguf", device="cpu", weights=weights)
    assert loaded.weights == weights
    return loaded


def make_engine(
    target: LoadedModel, draft: LoadedModel | None = None, num_blocks: int = 256, **config: object
) -> LLMEngine:
    cfg = EngineConfig(block_size=4, num_kv_blocks=num_blocks, draft_num_kv_blocks=num_blocks)
    for key, value in config.items():
        setattr(cfg, key, value)
    return LLMEngine.from_loaded(target, cfg, draft)


@dataclass
class Finished:
    """Everything a request produced."""

    text: str = ""
    token_ids: list[int] = field(default_factory=list)
    logits: list[torch.Tensor] = field(default_factory=list)
    outputs: list[RequestOutput] = field(default_factory=list)

    @property
    def last(self) -> RequestOutput:
        return self.outputs[-1]

    @property
    def metrics(self) -> RequestMetrics:
        return self.last.metrics

    @property
    def reason(self) -> FinishReason | None:
        return self.last.finish_reason


def observe_logits(engine: LLMEngine, record: Callable[[str, torch.Tensor], None]) -> None:
    """Calls ``record(request_id, row)`` with (a copy of) the logits row each emitted token was chosen
    from, by wrapping the runner's emission of tokens (the product keeps no hook for tests)."""
    emit = engine.runner._emit

    def observed(seq: Sequence, tokens: list[int], logits: torch.Tensor) -> None:
        before = len(seq.token_ids)
        emit(seq, tokens, logits)
        for row in range(len(seq.token_ids) - before):
            record(seq.request_id, logits[row].clone())

    engine.runner._emit = observed  # type: ignore[method-assign]


def run_all(engine: LLMEngine, requests: list[Request], max_steps: int = 10_000) -> dict[str, Finished]:
    """Add the requests, step until none is left, check the block invariants after every step.

    Results of requests added earlier show up too, under their ids; each holds the logits rows its
    tokens were chosen from (see `observe_logits`), those of the steps run here."""
    logits: dict[str, list[torch.Tensor]] = {}
    observe_logits(engine, lambda request_id, row: logits.setdefault(request_id, []).append(row))
    for request in requests:
        engine.add_request(request)
    results = {r.request_id: Finished() for r in requests}
    for _ in range(max_steps):
        if not engine.has_work():
            break
        for out in engine.step():
            result = results.setdefault(out.request_id, Finished())
            result.outputs.append(out)
            result.text += out.delta
            result.token_ids += out.token_ids
        engine.check_invariants()
    for request_id, result in results.items():
        result.logits = logits.get(request_id, [])
    assert not engine.has_work()
    assert all(r.outputs and r.last.finished for r in results.values())
    return results


@dataclass
class ExactnessRuns:
    """One greedy request over `PROMPTS[2]` run cold (no prefix cache), as a cache hit, and with
    prompt lookup, on engines over one model; `engine` ran the hit and the speculative run."""

    prompt_ids: list[int]
    cold: Finished
    hit: Finished
    spec: Finished
    engine: LLMEngine


def exactness_runs(model: LoadedModel) -> ExactnessRuns:
    """The runs that cache-hit and speculation exactness are judged on (4-token blocks)."""
    ids = model.tokenizer.encode(PROMPTS[2])

    def request(name: str, mode: SpecMode) -> Request:
        sampling = SamplingParams(max_tokens=24, ignore_eos=True)
        return Request(name, prompt_token_ids=ids, sampling=sampling, spec_mode=mode)

    cold = run_all(make_engine(model, enable_prefix_cache=False), [request("cold", SpecMode.OFF)])["cold"]
    engine = make_engine(model)
    run_all(engine, [request("first", SpecMode.OFF)])
    hit = run_all(engine, [request("hit", SpecMode.OFF)])["hit"]
    spec = run_all(engine, [request("spec", SpecMode.NGRAM)])["spec"]
    return ExactnessRuns(ids, cold, hit, spec, engine)


def assert_cache_hit_and_speculation_exact(model: LoadedModel) -> None:
    """A prefix-cache hit and prompt-lookup speculation give the tokens (and first logits) of a cold,
    plain run of the same greedy request, on an engine over `model` with 4-token blocks."""
    runs = exactness_runs(model)
    ids, cold, hit, spec, engine = runs.prompt_ids, runs.cold, runs.hit, runs.spec, runs.engine
    assert hit.metrics.reused_tokens == len(ids) - 1
    assert cold.token_ids == hit.token_ids == spec.token_ids
    torch.testing.assert_close(
        cold.logits[0], hit.logits[0], rtol=0, atol=logits_atol(model.device, model.dtype)
    )
    engine.check_invariants()
