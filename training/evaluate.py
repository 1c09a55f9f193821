"""The evaluation of the embedded model pair on its held-out split: ``python -m training.evaluate``.

It scores the recipe's own checkpoints the way their training sees them (Hugging Face transformers,
a dev dependency), not as codedraft serves them: ``codedraft bench model`` scores any model, this
pair included, through the served path (``bench/cursor_infill.py``).

Measured in one run on held-out files of the training corpus (the split of the training recipe):
* perplexity per token of target and draft on whole held-out files;
* single-line infilling on held-out functions: exact match of the target (SPM and PSM prompts) next to
  two baselines, an empty completion and a copy of the line above;
* syntax validity: the share of completions after which the file parses (tree-sitter) as it did before;
* the draft's greedy agreement with the target on the target's completions, and the tokens per
  target pass that greedy speculation with k proposals would give on them;
* the wall-clock speed-up of draft speculation on the same prompts, through the project engine
  (``bench/model_speculation.py``), with its acceptance and whether the outputs are identical.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

from bench.held_out import check_model_dir, held_out_percent
from codedraft.errors import CommandError

_SPECULATION_K = 4


def _parser() -> argparse.ArgumentParser:
    from inference.defaults import default_draft_model_dir, default_model_dir

    parser = argparse.ArgumentParser(prog="python -m training.evaluate", description=__doc__.split("\n")[0])
    parser.add_argument("--target", type=Path, default=default_model_dir(), help="target model directory")
    parser.add_argument("--draft", type=Path, default=default_draft_model_dir(), help="draft model directory")
    parser.add_argument("--corpus-root", type=Path, default=None, help="corpus the models were trained on")
    parser.add_argument("--held-out-percent", type=int, default=None, help="default: the training run's")
    parser.add_argument("--cases", type=int, default=200, help="single-line infilling cases")
    parser.add_argument("--ppl-rows", type=int, default=48, help="held-out rows (of the context length)")
    parser.add_argument("--max-new-tokens", type=int, default=48, help="per completion")
    parser.add_argument("--seed", type=int, default=0, help="seed of the case selection")
    parser.add_argument(
        "--spec-cases", type=int, default=60, help="infilling prompts run with draft speculation (0: skip)"
    )
    parser.add_argument(
        "--repetition",
        action="store_true",
        help="also decode the cases as editor suggestions with and without the daemon's repetition stop",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    return parser


def _rate(hits: int, total: int) -> float:
    return round(hits / total, 4) if total else math.nan


def evaluate(args: argparse.Namespace) -> dict[str, Any]:
    """All figures of one run, as a JSON-ready dict."""
    from inference.prompts.fim import fim_template_for
    from inference.tokenizer import Tokenizer

    try:  # the training package and transformers come with a source checkout and the dev extra
        from bench.corpus import collect_files, split_files, stdlib_root
        from bench.infill_cases import function_line_cases, parses_cleanly, truncate_around
        from training.examples import plain_rows
        from training.greedy import TransformersModel, tokens_per_target_pass
    except ImportError as exc:
        raise CommandError(f"the evaluation needs the dev extra (transformers): {exc}") from exc

    started = time.monotonic()
    root = args.corpus_root or stdlib_root()
    _, held = split_files(collect_files(root), held_out_percent(args))
    if not held:
        raise CommandError(f"--corpus-root {root}: no held-out Python files")
    target = TransformersModel(args.target)
    template = fim_template_for(Tokenizer.from_dir(args.target))  # the prompts the engine would build
    draft = TransformersModel(args.draft) if args.draft else None
    rows = plain_rows(held, target.tokenizer, target.context, args.ppl_rows)
    figures: dict[str, Any] = {"target": str(args.target), "held_out_files": len(held)}
    for name, model in (("target", target), ("draft", draft)):
        if model is not None:
            nll, count = model.mean_nll(rows)
            figures[f"{name}_perplexity"] = round(math.exp(nll), 3)
            figures["perplexity_tokens"] = count

    cases = function_line_cases(held, args.cases, args.seed)
    budget = target.context - args.max_new_tokens - 24  # room for the path header and special tokens
    exact = {"spm": 0, "psm": 0, "empty": 0, "above": 0}
    valid = {"spm": 0, "empty": 0, "above": 0}
    agreement: list[bool] = []
    spm_prompts: list[str] = []
    contexts: list[tuple[str, str, str]] = []
    exact_non_blank = 0  # target SPM hits on lines that are not blank (the InCoder-style task)
    for case in cases:
        prefix, suffix = truncate_around(case.prefix, case.suffix, lambda s: len(target.encode(s)), budget)
        baseline_before = parses_cleanly(case.file_text)
        contexts.append((prefix, suffix, case.path))
        for order in ("spm", "psm"):
            prompt = template.build(prefix, suffix, path=case.path, spm=order == "spm")
            ids = target.complete_line(prompt, args.max_new_tokens)
            line = target.decode(ids).split("\n", 1)[0]
            exact[order] += line.rstrip() == case.middle.rstrip()
            if order == "spm" and case.middle.strip():
                exact_non_blank += line.rstrip() == case.middle.rstrip()
            if order == "spm":
                spm_prompts.append(prompt)
                valid["spm"] += parses_cleanly(case.prefix + line + case.suffix) >= baseline_before
                if draft is not None:
                    agreement.extend(draft.greedy_agreement(prompt, ids))
        for name, line in (("empty", ""), ("above", case.line_above)):
            exact[name] += line.rstrip() == case.middle.rstrip()
            valid[name] += parses_cleanly(case.prefix + line + case.suffix) >= baseline_before
    n = len(cases)
    figures.update(
        cases=n,
        exact_match_target_spm=_rate(exact["spm"], n),
        exact_match_target_psm=_rate(exact["psm"], n),
        exact_match_empty=_rate(exact["empty"], n),
        exact_match_line_above=_rate(exact["above"], n),
        non_blank_cases=sum(bool(c.middle.strip()) for c in cases),
        exact_match_target_spm_non_blank=_rate(exact_non_blank, sum(bool(c.middle.strip()) for c in cases)),
        syntax_valid_target_spm=_rate(valid["spm"], n),
        syntax_valid_empty=_rate(valid["empty"], n),
        syntax_valid_line_above=_rate(valid["above"], n),
    )
    if agreement:
        figures["draft_greedy_agreement"] = _rate(sum(agreement), len(agreement))
        figures[f"tokens_per_target_pass_k{_SPECULATION_K}"] = round(
            tokens_per_target_pass(agreement, _SPECULATION_K), 3
        )
    if draft is not None and args.spec_cases > 0:
        from bench.model_speculation import speculation_figures

        spec = speculation_figures(
            args.target, args.draft, spm_prompts[: args.spec_cases], args.max_new_tokens
        )
        figures.update(
            spec_cases=min(args.spec_cases, len(spm_prompts)),
            spec_outputs_identical=spec["identical"],
            spec_draft_speedup=spec["draft"]["speedup"],
            spec_draft_acceptance=spec["draft"]["acceptance"],
            spec_auto_speedup=spec["auto"]["speedup"],
        )
    if args.repetition:
        from bench.model_repetition import repetition_figures
        from lsp_server.config import CompletionSettings

        figures.update(repetition_figures(args.target, contexts, CompletionSettings().max_tokens))
    figures["seconds"] = round(time.monotonic() - started, 1)
    return figures


def _report(figures: dict[str, Any]) -> str:
    beats = figures["exact_match_target_spm"] > max(
        figures["exact_match_empty"], figures["exact_match_line_above"]
    )
    lines = [
        f"held-out perplexity per token ({figures['perplexity_tokens']} tokens, "
        f"{figures['held_out_files']} held-out files): target {figures['target_perplexity']}, "
        f"draft {figures.get('draft_perplexity', 'n/a')}",
        f"single-line infilling, {figures['cases']} held-out function lines, exact match: "
        f"target SPM {figures['exact_match_target_spm']:.1%}, PSM {figures['exact_match_target_psm']:.1%}; "
        f"baselines: empty {figures['exact_match_empty']:.1%}, "
        f"line above {figures['exact_match_line_above']:.1%}"
        f" -> target beats both: {'yes' if beats else 'NO'}",
        f"  on the {figures['non_blank_cases']} non-blank lines: target SPM "
        f"{figures['exact_match_target_spm_non_blank']:.1%} (the empty baseline scores 0 there)",
        f"syntax validity (parses as before): target {figures['syntax_valid_target_spm']:.1%}, "
        f"empty {figures['syntax_valid_empty']:.1%}, line above {figures['syntax_valid_line_above']:.1%}",
    ]
    if "draft_greedy_agreement" in figures:
        per_pass = figures[f"tokens_per_target_pass_k{_SPECULATION_K}"]
        lines.append(
            f"draft greedy agreement on target completions: {figures['draft_greedy_agreement']:.1%}; "
            f"tokens per target pass at k={_SPECULATION_K}: {per_pass}"
        )
    if "spec_cases" in figures:
        lines.append(
            f"draft speculation through the engine on {figures['spec_cases']} of these prompts: "
            f"{figures['spec_draft_speedup']}x tokens/s (acceptance {figures['spec_draft_acceptance']}), "
            f"auto {figures['spec_auto_speedup']}x, outputs identical: {figures['spec_outputs_identical']}"
        )
    if "repetition_cases" in figures:
        from bench.model_repetition import report_line

        lines.append(report_line(figures))
    lines.append(f"({figures['seconds']} s)")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Run the evaluation and print its figures; exit code 0."""
    args = _parser().parse_args(argv)
    check_model_dir(args.target, "--target")
    if args.draft is not None and not (args.draft / "config.json").is_file():
        args.draft = None  # the draft is optional: evaluate the target alone
    import torch

    torch.manual_seed(args.seed)
    figures = evaluate(args)
    print(_report(figures))
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
