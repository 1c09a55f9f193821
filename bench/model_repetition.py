"""Repetition loops on the model evaluation's own cases, through the project engine.

``codedraft bench model --repetition`` decodes every infilling case as the language server asks for
a suggestion (the model's own FIM prompt, greedy, the completion settings' ``max_tokens``, several
lines allowed) on two engines side by side in one run: one that stops a looping output (the daemon's
default) and one that does not. Reported: the share of suggestions the daemon cut for repetition, the
tokens it did not generate, the share the language server's ``cut_repetition`` filter still cuts
after it (and would cut without it), and whether every stopped output is a prefix of the unstopped one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from inference.config import EngineConfig, SamplingParams, SpecMode
from inference.engine.engine import LLMEngine
from inference.engine.sequence import FinishReason, Request, RequestOutput
from inference.loading import load_model
from lsp_server.completion.postprocess.context import CursorContext
from lsp_server.completion.postprocess.cut_repetition import cut_repetition

Case = tuple[str, str, str]
"""(prefix, suffix, path) of one infilling case."""


def repetition_figures(target_dir: Path, cases: Sequence[Case], max_tokens: int) -> dict[str, Any]:
    """The figures of the module docstring for ``cases`` on the model in ``target_dir``."""
    model = load_model(target_dir, "cpu", dtype=torch.float32)
    limit = model.config.max_position_embeddings
    requests: list[Request] = []
    for index, (prefix, suffix, path) in enumerate(cases):
        ids = model.tokenizer.encode(model.fim.build(prefix, suffix, path=path))
        budget = min(max_tokens, limit - len(ids) - 1)
        if budget < 1:
            continue
        sampling = SamplingParams(max_tokens=budget, stop_token_ids=tuple(sorted(model.fim.stop_token_ids)))
        requests.append(
            Request(f"case{index}", prompt_token_ids=ids, sampling=sampling, spec_mode=SpecMode.OFF)
        )
    results = {}
    for stop in (True, False):
        config = EngineConfig(kv_cache_mb=256.0, stop_repetition=stop, max_waiting=max(64, len(requests)))
        engine = LLMEngine.from_loaded(model, config)
        results[stop] = _run(engine, requests)
    stopped, unstopped = results[True], results[False]
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
    """One line for ``bench model``'s report."""
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
