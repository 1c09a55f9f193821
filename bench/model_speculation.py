"""Speculative decoding on real models, through the project engine, modes side by side in one run.

* `speculation_figures`: the single-line infilling prompts of ``python -m training.evaluate`` with the
  target and its draft: plain decoding against draft speculation (and ``auto``), greedy, each
  completion ending at the template's end tokens or at the end of its line, as the evaluation scores
  it. Reported: tokens/s ratio, acceptance and whether the outputs are identical.
* `refactor_figures` (``python -m bench.model_speculation --model FILE``): rename a symbol in 40-60
  line functions of this repository, so the output copies the prompt: modes off, ngram and auto on
  one engine, greedy, the modes' order rotating between rounds. Reported per prompt and in total:
  tokens/s, acceptance, whether outputs are identical, auto against the better of off and ngram, and
  how many lines of the renamed function the output reproduces verbatim (how much the model copies).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from bench.engine import bench_speculation, run_one
from bench.engine_workloads import lines_reproduced, refactor_prompts
from inference.config import EngineConfig, SamplingParams, SpecMode
from inference.defaults import default_model_dir
from inference.engine.engine import LLMEngine
from inference.engine.sequence import Request
from inference.loading import load_model

_MODES = (SpecMode.OFF, SpecMode.NGRAM, SpecMode.AUTO)


def speculation_figures(
    target_dir: Path, draft_dir: Path, prompts: list[str], max_tokens: int
) -> dict[str, Any]:
    """Draft speculation versus plain decoding on ``prompts`` (FIM prompts, special tokens as text)."""
    target = load_model(target_dir, "cpu", dtype=torch.float32)
    draft = load_model(draft_dir, "cpu", dtype=torch.float32)
    engine = LLMEngine.from_loaded(target, EngineConfig(), draft)
    sampling = SamplingParams(
        max_tokens=max_tokens, stop=("\n",), stop_token_ids=tuple(target.fim.stop_token_ids)
    )
    requests = [
        Request(f"infill{i}", prompt_token_ids=target.tokenizer.encode(prompt), sampling=sampling)
        for i, prompt in enumerate(prompts)
    ]
    title = "speculative decoding on the infilling prompts (SPM), draft model"
    return bench_speculation(title, engine, requests, [SpecMode.DRAFT, SpecMode.AUTO])


def _prefer_40_to_60_lines(lines: int) -> float:
    return abs(lines - 50) if 40 <= lines <= 60 else 1000 + lines


def refactor_figures(model: Path, prompts: int, rounds: int) -> dict[str, Any]:
    """Modes off, ngram and auto on `prompts` rename refactors, each run `rounds` times per mode."""
    loaded = load_model(model, "cpu", dtype=torch.float32)
    cases = refactor_prompts(loaded, loaded.config.max_position_embeddings, prompts, _prefer_40_to_60_lines)
    config = EngineConfig(max_step_tokens=4096, prefill_chunk=4096)
    engine = LLMEngine.from_loaded(loaded, config)
    seconds = {m: 0.0 for m in _MODES}
    tokens = {m: 0 for m in _MODES}
    proposed = {m: 0 for m in _MODES}
    accepted = {m: 0 for m in _MODES}
    identical, turn = True, 0
    print(f"model {model.name}, float32 on cpu, torch threads {torch.get_num_threads()}, load {_load()}")
    print(
        f"{'prompt':<34}{'tokens':>7}{'off t/s':>9}{'ngram t/s':>11}{'auto t/s':>10}{'ngram':>7}"
        f"{'auto':>7}{'auto/best':>10}{'accept':>8}{'same':>6}"
    )
    for i, case in enumerate(cases):
        base = Request(
            f"refactor{i}",
            prompt_token_ids=loaded.tokenizer.encode(case.prompt),
            sampling=SamplingParams(max_tokens=len(loaded.tokenizer.encode(case.continuation)) + 16),
        )
        # The prompt's KV is cached first, so every mode pays the same (small) prefill.
        run_one(
            engine, replace(base, request_id=f"{base.request_id}-warm", sampling=SamplingParams(max_tokens=1))
        )
        here = {m: 0.0 for m in _MODES}
        ngram_before = (accepted[SpecMode.NGRAM], proposed[SpecMode.NGRAM])
        outputs: dict[SpecMode, list[int]] = {}
        for r in range(rounds):
            order = _MODES[turn % 3 :] + _MODES[: turn % 3]
            turn += 1
            for m in order:
                run = run_one(
                    engine, replace(base, request_id=f"{base.request_id}-{m.value}-{r}", spec_mode=m)
                )
                here[m] += run.seconds
                seconds[m] += run.seconds
                tokens[m] += len(run.tokens)
                proposed[m] += run.metrics.spec_proposed
                accepted[m] += run.metrics.spec_accepted
                identical &= outputs.setdefault(m, run.tokens) == run.tokens
        same = all(out == outputs[SpecMode.OFF] for out in outputs.values())
        identical &= same
        n = len(outputs[SpecMode.OFF]) * rounds
        rate = {m: n / here[m] for m in _MODES}
        ngram_share = _share(
            accepted[SpecMode.NGRAM] - ngram_before[0], proposed[SpecMode.NGRAM] - ngram_before[1]
        )
        first_line = case.prompt.rpartition("\n")[2]
        text = loaded.tokenizer.decode(outputs[SpecMode.OFF])
        copied = lines_reproduced(first_line + case.continuation, first_line + text)
        label = f"{first_line[:18]} {case.lines} lines ({copied} kept)"
        print(
            f"{label:<34}{n // rounds:>7}{rate[SpecMode.OFF]:>9.1f}{rate[SpecMode.NGRAM]:>11.1f}"
            f"{rate[SpecMode.AUTO]:>10.1f}{rate[SpecMode.NGRAM] / rate[SpecMode.OFF]:>6.2f}x"
            f"{rate[SpecMode.AUTO] / rate[SpecMode.OFF]:>6.2f}x"
            f"{rate[SpecMode.AUTO] / max(rate[SpecMode.OFF], rate[SpecMode.NGRAM]):>9.2f}x"
            f"{ngram_share:>8}"
            f"{same!s:>6}"
        )
    engine.check_invariants()
    rate = {m: tokens[m] / seconds[m] for m in _MODES}
    figures: dict[str, Any] = {
        "identical": identical,
        "tokens/s": {m.value: round(rate[m], 2) for m in _MODES},
        "ngram_speedup": round(rate[SpecMode.NGRAM] / rate[SpecMode.OFF], 3),
        "auto_speedup": round(rate[SpecMode.AUTO] / rate[SpecMode.OFF], 3),
        "auto_vs_best": round(rate[SpecMode.AUTO] / max(rate[SpecMode.OFF], rate[SpecMode.NGRAM]), 3),
        "acceptance": {m.value: _share(accepted[m], proposed[m]) for m in (SpecMode.NGRAM, SpecMode.AUTO)},
    }
    print(f"total: {figures}, load {_load()}")
    return figures


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.2f}" if whole else "-"


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str]) -> int:
    """Run the refactor benchmark (see --help); returns the exit code."""
    prog = "python -m bench.model_speculation"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=default_model_dir(), help="model folder or GGUF file")
    parser.add_argument("--prompts", type=int, default=3, help="rename refactors (functions of 40-60 lines)")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each prompt per mode")
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    args = parser.parse_args(argv)
    if args.prompts < 1 or args.rounds < 1:
        parser.error("--prompts and --rounds must be at least 1")
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.set_grad_enabled(False)
    refactor_figures(args.model, args.prompts, args.rounds)
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
