"""Repetition loops on the model evaluation's own cases, through the project engine.

``python -m training.evaluate --repetition`` decodes every infilling case as the language server asks for
a suggestion (the model's own FIM prompt, greedy, the completion settings' ``max_tokens``, several
lines allowed) on two engines side by side in one run: one that stops a looping output (the daemon's
default) and one that does not. Reported: the share of suggestions the daemon cut for repetition, the
tokens it did not generate, the share the language server's ``cut_repetition`` filter still cuts
after it (and would cut without it), and whether every stopped output is a prefix of the unstopped one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from inference.config import EngineConfig, SamplingParams, SpecMode
from inference.engine.engine import LLMEngine
from inference.engine.sequence import FinishReason, Request, RequestOutput
from inference.loading import load_model
from inference.prompts.prefix_only import suffix_stop
from lsp_server.completion.postprocess.context import CursorContext
from lsp_server.completion.postprocess.cut_repetition import cut_repetition

Case = tuple[str, str, str]
"""(prefix, suffix, path) of one infilling case."""


def repetition_figures(
    target_dir: Path, cases: Sequence[Case], max_tokens: int, kv_cache_mb: float = 2048.0
) -> dict[str, Any]:
    """The figures of the module docstring for ``cases`` on the model in ``target_dir``."""
    model = load_model(target_dir, "cpu", dtype=torch.float32)
    limit = model.config.max_position_embeddings
    requests: list[Request] = []
    for index, (prefix, suffix, path) in enumerate(cases):
        ids = model.tokenizer.encode(model.fim.build(prefix, suffix, path=path))
        budget = min(max_tokens, limit - len(ids) - 1)
        if budget < 1:
            continue
        # a prefix-only model stops where its text runs into the suffix's first line, as in the daemon
        stop = suffix_stop(suffix) if model.fim.family == "prefix-only" else None
        sampling = SamplingParams(
            max_tokens=budget,
            stop=(stop,) if stop is not None else (),
            stop_token_ids=tuple(sorted(model.fim.stop_token_ids)),
        )
        requests.append(
            Request(f"case{index}", prompt_token_ids=ids, sampling=sampling, spec_mode=SpecMode.OFF)
        )
    # One engine for both runs: the second finds every prompt in the prefix cache (a hit gives the
    # output of a miss), so only the decoding is paid twice.
    config = EngineConfig(kv_cache_mb=kv_cache_mb, max_waiting=max(64, len(requests)))
    engine = LLMEngine.from_loaded(model, config)
    stopped = _run(engine, requests)
    config.stop_repetition = False
    unstopped = _run(engine, [replace(r, request_id=f"{r.request_id}-unstopped") for r in requests])
    unstopped = {rid.removesuffix("-unstopped"): out for rid, out in unstopped.items()}
    contexts = {
        f"case{i}": CursorContext(prefix, suffix, "python") for i, (prefix, suffix, _) in enumerate(cases)
    }
    cut = [rid for rid, out in stopped.items() if out.reason == FinishReason.REPETITION]
    generated_on = sum(out.generated for out in stopped.values())
    generated_off = sum(out.generated for out in unstopped.values())
    filtered_after = sum(cut_repetition(contexts[rid], out.text) != out.text for rid, out in stopped.items())
    filtered_alone = sum(
        cut_repetition(contexts[rid], out.text) != out.text for rid, out in unstopped.items()
    )
    n = len(requests)
    return {
        "repetition_cases": n,
        "repetition_max_tokens": max_tokens,
        "repetition_cut_share": round(len(cut) / n, 4) if n else 0.0,
        "repetition_tokens_generated_without_stop": generated_off,
        "repetition_tokens_generated_with_stop": generated_on,
        "repetition_tokens_saved": generated_off - generated_on,
        "repetition_tokens_saved_share": round((generated_off - generated_on) / generated_off, 4)
        if generated_off
        else 0.0,
        "repetition_tokens_saved_per_cut": round((generated_off - generated_on) / len(cut), 1)
        if cut
        else 0.0,
        "repetition_filter_cuts_after_stop_share": round(filtered_after / n, 4) if n else 0.0,
        "repetition_filter_cuts_without_stop_share": round(filtered_alone / n, 4) if n else 0.0,
        "repetition_stopped_is_prefix": all(
            unstopped[rid].token_ids[: len(out.token_ids)] == out.token_ids for rid, out in stopped.items()
        ),
    }


def report_line(figures: dict[str, Any]) -> str:
    """One line for ``training.evaluate``'s report."""
    f = figures
    return (
        f"repetition on {f['repetition_cases']} suggestions ({f['repetition_max_tokens']} tokens max): "
        f"the daemon cut {f['repetition_cut_share']:.1%}, saving {f['repetition_tokens_saved']} of "
        f"{f['repetition_tokens_generated_without_stop']} generated tokens "
        f"({f['repetition_tokens_saved_share']:.1%}, {f['repetition_tokens_saved_per_cut']} per cut); "
        f"the LSP filter then cuts {f['repetition_filter_cuts_after_stop_share']:.1%} "
        f"(alone: {f['repetition_filter_cuts_without_stop_share']:.1%}); "
        f"stopped outputs are prefixes: {f['repetition_stopped_is_prefix']}"
    )


class _Finished:
    def __init__(self) -> None:
        self.text = ""
        self.token_ids: list[int] = []
        self.generated = 0
        self.reason: FinishReason | None = None

    def add(self, output: RequestOutput) -> None:
        self.text += output.delta
        self.token_ids += output.token_ids
        if output.finished:
            self.generated = output.metrics.generated_tokens
            self.reason = output.finish_reason


def _run(engine: LLMEngine, requests: list[Request]) -> dict[str, _Finished]:
    results = {request.request_id: _Finished() for request in requests}
    for request in requests:
        engine.add_request(request)
    while engine.has_work():
        for output in engine.step():
            results[output.request_id].add(output)
    return results


def main(argv: list[str]) -> int:
    """``python -m bench.model_repetition``: these figures alone, on the cases ``training.evaluate`` draws."""
    import argparse
    import json

    from bench.corpus import collect_files, split_files, stdlib_root
    from bench.held_out import check_model_dir, held_out_percent
    from bench.infill_cases import function_line_cases, truncate_around
    from lsp_server.config import CompletionSettings

    parser = argparse.ArgumentParser(
        prog="python -m bench.model_repetition", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--target", type=Path, required=True, help="model directory or GGUF file")
    parser.add_argument("--corpus-root", type=Path, default=None, help="corpus the model was trained on")
    parser.add_argument("--held-out-percent", type=int, default=None, help="default: the training run's")
    parser.add_argument(
        "--cases", type=int, default=200, help="infilling cases (as training.evaluate draws them)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the case selection")
    parser.add_argument(
        "--max-tokens", type=int, default=CompletionSettings().max_tokens, help="per suggestion"
    )
    parser.add_argument(
        "--prompt-tokens", type=int, default=None, help="prompt budget (default: the language server's)"
    )
    args = parser.parse_args(argv)
    if args.target.suffix != ".gguf":
        check_model_dir(args.target, "--target")
    _, held = split_files(collect_files(args.corpus_root or stdlib_root()), held_out_percent(args))
    model = load_model(args.target, "cpu", dtype=torch.float32)
    tokenizer = model.tokenizer
    # prompts as long as the language server sends (its prefix and suffix budgets), if they fit
    settings = CompletionSettings()
    context = model.config.max_position_embeddings - args.max_tokens - 24
    budget = min(args.prompt_tokens or settings.prefix_budget_tokens + settings.suffix_budget_tokens, context)
    cases = []
    for case in function_line_cases(held, args.cases, args.seed):
        prefix, suffix = truncate_around(case.prefix, case.suffix, lambda s: len(tokenizer.encode(s)), budget)
        cases.append((prefix, suffix, case.path))
    figures = repetition_figures(args.target, cases, args.max_tokens)
    print(report_line(figures))
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
