"""Engine benchmarks, measured side by side in one run (`codedraft bench engine`).

1. Typing session: a source file of this repository is typed in bursts; after each burst a FIM
   completion is requested at the end of the text, on an engine with the prefix cache and on one
   without. Reported: prompt tokens computed per request and time to first token (median, p95).
2. Refactor: "rename a symbol" in a ~60-line function of this repository, which makes the output copy
   most of the prompt: prompt lookup versus plain decoding (tokens/s, acceptance, identical output).
3. Completions with the draft model versus plain decoding (tokens/s, acceptance, identical output).

Uses `models/codedraft-base` and `models/codedraft-draft` when they exist, else tiny random
checkpoints (the output says which); `--model PATH` alone benchmarks any model without a draft
(part 3 is then skipped). Completion prompts are token-healed as the daemon heals them
(`--no-healing` sends them as typed). Requests run one at a time, the two variants alternating, so
both see the same machine noise. The prompts of the workloads are built in `bench/engine_workloads.py`.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from bench.engine_workloads import lines_reproduced, refactor_prompt, typing_prompts
from inference.config import EngineConfig, SamplingParams, SpecMode
from inference.defaults import REPO_ROOT, default_draft_model_dir, default_model_dir
from inference.engine.engine import LLMEngine
from inference.engine.sequence import Request, RequestMetrics
from inference.loading import LoadedModel, ModelLoadError, load_model
from inference.prompts.token_boundary import HealedPrompt, heal_prompt


@dataclass
class Run:
    """One finished request: its tokens, figures and wall time."""

    tokens: list[int]
    metrics: RequestMetrics
    seconds: float


def run_one(engine: LLMEngine, request: Request) -> Run:
    """Run one request to the end on an otherwise idle engine."""
    started = time.perf_counter()
    engine.add_request(request)
    tokens: list[int] = []
    metrics = None
    while engine.has_work():
        for out in engine.step():
            tokens += out.token_ids
            metrics = out.metrics
    assert metrics is not None
    return Run(tokens, metrics, time.perf_counter() - started)


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _row(label: str, left: float, right: float, ratio: float, unit: str = "") -> str:
    return f"  {label:<30}{left:>12.1f}{unit:<3}{right:>12.1f}{unit:<3}{ratio:>9.1f}x"


def _gain(before: list[float], after: list[float], q: float, label: str, unit: str = "") -> str:
    """Row of quantile q, cache off vs on, with how many times smaller the second is."""
    a, b = _p(before, q), _p(after, q)
    return _row(label, a, b, a / b if b else float("inf"), unit)


def bench_typing(loaded: LoadedModel, args: argparse.Namespace, budget: int) -> None:
    """Part 1: the typing session, prefix cache on versus off."""
    prompts = typing_prompts(loaded, args.file, args.burst_chars, budget, args.requests)
    engines = {cache: make_engine(loaded, None, args, enable_prefix_cache=cache) for cache in (False, True)}
    for engine in engines.values():
        run_one(engine, _completion("warmup", loaded, prompts[0], args.completion_tokens, SpecMode.OFF))
    computed: dict[bool, list[float]] = {False: [], True: []}
    ttft: dict[bool, list[float]] = {False: [], True: []}
    identical = 0
    for i, prompt in enumerate(prompts):
        order = (False, True) if i % 2 else (True, False)
        outputs = {}
        for cache in order:
            request = _completion(f"t{i}", loaded, prompt, args.completion_tokens, SpecMode.OFF, args.healing)
            run = run_one(engines[cache], request)
            computed[cache].append(run.metrics.computed_tokens)
            ttft[cache].append(1000 * (run.metrics.time_to_first_token or 0.0))
            outputs[cache] = run.tokens
        identical += outputs[False] == outputs[True]
    for engine in engines.values():
        engine.check_invariants()
    prompt_lengths = [len(loaded.tokenizer.encode(p)) for p in prompts]
    print(
        f"\n1. typing session: {args.file.name}, {len(prompts)} completions, prompts "
        f"{min(prompt_lengths)}-{max(prompt_lengths)} tokens, "
        f"outputs identical with and without cache: {identical}/{len(prompts)}"
    )
    print(f"  {'':<30}{'cache off':>15}{'cache on':>15}{'ratio':>10}")
    print(_gain(computed[False], computed[True], 0.5, "tokens computed, median"))
    print(_gain(computed[False], computed[True], 0.95, "tokens computed, p95"))
    print(_gain(ttft[False], ttft[True], 0.5, "time to first token, median", "ms"))
    print(_gain(ttft[False], ttft[True], 0.95, "time to first token, p95", "ms"))


def bench_speculation(
    title: str, engine: LLMEngine, requests: list[Request], modes: list[SpecMode]
) -> dict[str, Any]:
    """Each request once per mode (plain first in the table), rotating the order between requests.

    Prints the table and returns its figures: ``identical``, ``tokens`` (per mode) and, per
    speculative mode, ``speedup`` (tokens/s against plain) and ``acceptance``.
    """
    all_modes = [SpecMode.OFF, *modes]
    seconds = dict.fromkeys(all_modes, 0.0)
    tokens = dict.fromkeys(all_modes, 0)
    proposed, accepted, passes = dict.fromkeys(modes, 0), dict.fromkeys(modes, 0), dict.fromkeys(modes, 0)
    identical = True
    for i, base in enumerate(requests):
        # The prompt's KV is cached first, so every mode pays the same (small) prefill.
        run_one(
            engine, replace(base, request_id=f"{base.request_id}-warm", sampling=SamplingParams(max_tokens=1))
        )
        order = all_modes[i % len(all_modes) :] + all_modes[: i % len(all_modes)]
        outputs = {}
        for m in order:
            run = run_one(engine, replace(base, request_id=f"{base.request_id}-{m}", spec_mode=m))
            seconds[m] += run.seconds
            tokens[m] += len(run.tokens)
            outputs[m] = run.tokens
            if m in proposed:
                proposed[m] += run.metrics.spec_proposed
                accepted[m] += run.metrics.spec_accepted
                passes[m] += run.metrics.target_forward_passes
        identical &= all(out == outputs[SpecMode.OFF] for out in outputs.values())
    engine.check_invariants()
    plain_rate = tokens[SpecMode.OFF] / seconds[SpecMode.OFF]
    print(
        f"\n{title}: {len(requests)} requests, {tokens[SpecMode.OFF]} tokens each way, "
        f"outputs identical: {identical}"
    )
    print(f"  {'tokens/s':<30}{'plain':>15}{'speculative':>15}{'ratio':>10}")
    figures: dict[str, Any] = {"identical": identical, "tokens": tokens[SpecMode.OFF]}
    for m in modes:
        rate = tokens[m] / seconds[m]
        acceptance = accepted[m] / proposed[m] if proposed[m] else 0.0
        ratio = rate / plain_rate if plain_rate else float("nan")  # nan: nothing was generated
        print(_row(f"mode {m.value}", plain_rate, rate, ratio))
        print(
            f"    acceptance {accepted[m]}/{proposed[m]} = {acceptance:.2f}, "
            f"{passes[m]} target passes for {tokens[m]} tokens"
        )
        figures[m.value] = {"speedup": round(ratio, 3), "acceptance": round(acceptance, 3)}
    return figures


def bench_refactor(target: LoadedModel, args: argparse.Namespace) -> None:
    """Part 2: the rename refactor, prompt lookup versus plain, and how faithful the output is."""
    case = refactor_prompt(target, target.config.max_position_embeddings)
    if case is None:
        print("\n2. refactor: skipped, no function of this repository fits the model's context twice")
        return
    expected = len(target.tokenizer.encode(case.continuation))
    request = Request(
        "refactor",
        prompt_token_ids=target.tokenizer.encode(case.prompt),
        sampling=SamplingParams(max_tokens=expected + 16, ignore_eos=False),
    )
    engine = make_engine(target, None, args)
    title = f"2. refactor (rename a symbol in a {case.lines}-line function)"
    bench_speculation(title, engine, [request] * 3, [SpecMode.NGRAM, SpecMode.AUTO])
    output = target.tokenizer.decode(run_one(engine, replace(request, request_id="refactor-check")).tokens)
    # Counted on the whole function: its first line is right only if the output ends it right.
    first_line = case.prompt.rpartition("\n")[2]
    expected_lines = (first_line + case.continuation).splitlines()
    print(
        f"    the output reproduces {lines_reproduced(first_line + case.continuation, first_line + output)} "
        f"of the renamed function's {len(expected_lines)} lines verbatim "
        f"({len((first_line + output).splitlines())} lines written)"
    )


def _completion(
    request_id: str, loaded: LoadedModel, prompt: str, max_tokens: int, mode: SpecMode, heal: bool = False
) -> Request:
    stops = tuple(loaded.fim.stop_token_ids)
    ids = loaded.tokenizer.encode(prompt)
    healed = heal_prompt(loaded.tokenizer, ids) if heal else HealedPrompt(ids)
    return Request(
        request_id,
        prompt_token_ids=healed.token_ids,
        spec_mode=mode,
        sampling=SamplingParams(
            max_tokens=max_tokens + healed.removed_tokens, stop_token_ids=stops, ignore_eos=True
        ),
        healing=healed.removed,
    )


def make_engine(
    loaded: LoadedModel, draft: LoadedModel | None, args: argparse.Namespace, **kw: object
) -> LLMEngine:
    """An engine for the benchmark, with config fields overridden by `kw`."""
    config = EngineConfig(
        block_size=args.block_size, kv_cache_mb=args.kv_cache_mb, max_step_tokens=4096, prefill_chunk=4096
    )
    for key, value in kw.items():
        setattr(config, key, value)
    return LLMEngine.from_loaded(loaded, config, draft)


def load_pair(args: argparse.Namespace) -> tuple[LoadedModel, LoadedModel | None, str]:
    """The target and draft models and a line saying which."""
    if args.draft is None:  # the default pair's draft goes with the default target only
        args.draft = default_draft_model_dir() if args.model == default_model_dir() else None
    if args.draft is None and args.model.exists():
        return load_model(args.model, args.device), None, f"{args.model} (no draft model)"
    if args.model.is_dir() and args.draft is not None and args.draft.is_dir():
        note = f"{args.model} + draft {args.draft}"
        return load_model(args.model, args.device), load_model(args.draft, args.device), note
    raise SystemExit(f"no model at {args.model}: pass --model PATH (a folder or a GGUF file)")


def main(argv: list[str]) -> int:
    """Run the benchmarks named by argv (see --help); returns the exit code."""
    parser = argparse.ArgumentParser(prog="codedraft bench engine", description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=default_model_dir(), help="target model directory")
    parser.add_argument(
        "--draft", type=Path, default=None, help="draft model directory (default: the default pair's draft)"
    )
    parser.add_argument("--device", default="cpu", help="auto|cpu|cuda")
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    typed = REPO_ROOT / "inference" / "engine" / "engine.py"
    parser.add_argument("--file", type=Path, default=typed, help="source file typed in the typing session")
    parser.add_argument("--requests", type=int, default=120, help="completions in the typing session")
    parser.add_argument("--burst-chars", type=int, default=24, help="characters typed per burst")
    parser.add_argument("--completion-tokens", type=int, default=16, help="max tokens per completion")
    parser.add_argument("--block-size", type=int, default=16, help="KV block size in tokens")
    parser.add_argument(
        "--kv-cache-mb", type=float, default=None, help="KV pool size (default: sized by the model)"
    )
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: typing,refactor,draft")
    parser.add_argument(
        "--no-healing",
        dest="healing",
        action="store_false",
        help="send completion prompts without token healing",
    )
    args = parser.parse_args(argv)
    if not args.file.is_file():
        parser.error(f"--file {args.file}: no such file")
    if args.requests < 1 or args.burst_chars < 1 or args.completion_tokens < 1:
        parser.error("--requests, --burst-chars and --completion-tokens must be at least 1")
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    skip = set(filter(None, args.skip.split(",")))
    try:
        target, draft, note = load_pair(args)
    except ModelLoadError as exc:
        parser.error(str(exc))
    budget = min(target.config.max_position_embeddings - 64, 2048)
    print(f"model: {note}; token healing {'on' if args.healing else 'off'}")
    print(
        f"device {target.device}, {target.dtype}, torch threads {torch.get_num_threads()}, "
        f"block size {args.block_size}, prompt budget {budget} tokens"
    )
    if "typing" not in skip:
        bench_typing(target, args, budget)
    if "refactor" not in skip:
        bench_refactor(target, args)
    if "draft" not in skip and draft is not None:
        prompts = typing_prompts(target, args.file, 200, budget, 40)[::5]
        requests = [_completion(f"d{i}", target, p, 40, SpecMode.OFF) for i, p in enumerate(prompts)]
        engine = make_engine(target, draft, args)
        bench_speculation("3. completions, draft model", engine, requests, [SpecMode.DRAFT, SpecMode.AUTO])
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
