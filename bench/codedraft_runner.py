"""codedraft's side of `codedraft bench versus-llamacpp`: greedy generation through one engine, timed,
with the model's projections in a chosen `--weights` form."""

from __future__ import annotations

import copy
import dataclasses
import time

from bench.llamacpp_runner import Timed
from inference.config import EngineConfig, SamplingParams, SpecMode
from inference.cpu_threads import CpuThreads
from inference.engine.engine import LLMEngine
from inference.engine.sequence import Request
from inference.loading import LoadedModel, resolve_weights


def with_weights(loaded: LoadedModel, weights: str) -> LoadedModel:
    """A copy of `loaded` (its model in the checkpoint's layout) with the projections in `weights` form
    ("checkpoint": left as loaded, plain `nn.Linear`s, the layout before packing)."""
    form = (
        None
        if weights == "checkpoint"
        else resolve_weights(weights, loaded.device, loaded.dtype, loaded.block_quantized)
    )
    model = copy.deepcopy(loaded.model)
    if form is not None:
        model.pack_weights(form)
    return dataclasses.replace(loaded, model=model, weights=form)


class CodedraftRunner:
    """Greedy generation through one LLMEngine with the prefix cache, one request at a time; `threads`,
    when given, sets the CPU thread count before each step, as the daemon's engine thread does."""

    def __init__(self, loaded: LoadedModel, threads: CpuThreads | None = None) -> None:
        self.threads = threads
        config = EngineConfig(max_step_tokens=4096, prefill_chunk=4096)
        self.engine = LLMEngine.from_loaded(loaded, config, None)
        # Cold prompts run on an engine without the prefix cache, so nothing of them is reused.
        config.enable_prefix_cache = False
        self.uncached = LLMEngine.from_loaded(loaded, config, None)
        self.count = 0

    def new_turn(self) -> None:
        """The engine's turn after another engine's: its load is over, so the thread count starts again
        from the cap (as a daemon alone on the machine would run), not from the other's samples."""
        if self.threads is not None:
            self.threads.restart()

    def generate(
        self, prompt_ids: list[int], max_tokens: int, mode: SpecMode = SpecMode.OFF, cold: bool = False
    ) -> Timed:
        """Greedy tokens after `prompt_ids`, ignoring end of text, timed (`cold`: on the uncached engine)."""
        engine = self.uncached if cold else self.engine
        self.count += 1
        request = Request(
            f"r{self.count}",
            prompt_token_ids=prompt_ids,
            spec_mode=mode,
            sampling=SamplingParams(max_tokens=max_tokens, ignore_eos=True),
        )
        started, cpu_started = time.perf_counter(), time.process_time()
        engine.add_request(request)
        tokens: list[int] = []
        computed = 0
        first = first_cpu = 0.0
        while engine.has_work():
            if self.threads is not None:
                self.threads.apply()
            for out in engine.step():
                if out.token_ids and not tokens:
                    first, first_cpu = time.perf_counter() - started, time.process_time() - cpu_started
                tokens += out.token_ids
                if out.metrics is not None:
                    computed = out.metrics.computed_tokens
        total, total_cpu = time.perf_counter() - started, time.process_time() - cpu_started
        return Timed(tokens, first, total, computed, first_cpu, total_cpu)
