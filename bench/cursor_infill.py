"""Any model on single-line infilling at realistic cursors: ``codedraft bench model [--model PATH]``.

The cases (cursors in held-out files of the standard library and of numpy) are drawn in
``bench/cursor_cases.py``. Each is asked as the editor would ask it, through the product's code paths:
the language server's request (``lsp_server.completion.request``: the document window that its default
budgets allow in the model's context, the path, the default settings, and the snippets it retrieves
from the corpus indexed as a workspace, ``bench/cursor_retrieval.py``; ``--no-index``: none), the
daemon's request path (``prepare_complete``: the model's FIM layout or its prefix-only prompt and
suffix stop, truncation, token healing) and the engine, greedy, stopping at the end of the first
line (greedy, so the same first line as the whole suggestion). The line then goes through the
language server's post-processing: the score is what the user is shown. ``--naive-prompt`` asks the
same way with the prompt a user gives llama.cpp instead of the daemon's (``bench/naive_prompt.py``).
Where the server asks nothing (the cursor in a comment) or post-processing drops the suggestion, the
user is shown nothing, scored as an empty line.

Scored: exact match of the shown first line with the hidden rest of the line (also before
post-processing), and the share of suggestions after which the file parses as it did before
(tree-sitter), with token healing on and off, next to two baselines: an empty completion and a copy
of the line above. Both variants see the same cases; the second reuses the first's cached prompt.

Then at block cursors (``bench/block_infill.py``, ``--block-cases``): how often the later lines of the
block the language server asks for there are exactly right, as ``block_or_line``'s threshold moves
(``bench/block_curve.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.block_curve import block_figures, later_lines_entry
from bench.block_infill import corpus_blocks
from bench.confidence_curve import calibrate, calibrate_from_runs, gate_figures, shipped_point
from bench.cursor_cases import CORPORA, CursorCase, corpus_cases, corpus_root
from bench.cursor_infill_flags import flags
from bench.infill_report import report
from bench.infill_tally import MODES, InfillTally
from bench.inside_line_infill import corpus_inside_lines, inside_line_figures, inside_line_report
from bench.served_request import budgets, complete, editor_request
from codedraft.errors import CommandError


def _write(path: Path | None, figures: dict[str, Any]) -> None:
    if path is not None:
        path.write_text(json.dumps(figures, indent=2) + "\n")


async def _suggest(served: Any, request: Any, mode: str, request_id: str) -> tuple[str, Any]:
    """The first line of the model's suggestion (before post-processing) and the final output."""
    from inference.api.codedraft.v1 import inference_pb2 as pb

    request.sampling.stop.append("\n")  # the first line is all that is scored
    request.speculation = pb.SPECULATION_MODE_OFF  # greedy output is the same with speculation
    request.token_healing = mode == "healing"
    text, last = await complete(served, request, request_id)
    return text.split("\n", 1)[0], last


async def _score(
    served: Any,
    cases: list[CursorCase],
    args: argparse.Namespace,
    corpus: str,
    retrieval: Any,
    progress: Callable[[InfillTally], None],
) -> InfillTally:
    from lsp_server.config import CompletionSettings

    settings = CompletionSettings()
    sizes = budgets(served, settings, args.context_tokens)
    tally = InfillTally()
    for index, case in enumerate(cases):
        await _score_case(served, case, index, corpus, args, settings, sizes, retrieval, tally)
        if (index + 1) % 10 == 0:
            progress(tally)
            print(
                f"  {corpus}: {index + 1}/{len(cases)} cases, exact with healing "
                f"{tally.exact['healing']}, without {tally.exact['no_healing']}",
                file=sys.stderr,
                flush=True,
            )
    return tally


async def _score_case(
    served: Any,
    case: CursorCase,
    index: int,
    corpus: str,
    args: argparse.Namespace,
    settings: Any,
    budgets: Any,
    retrieval: Any,
    tally: InfillTally,
) -> None:
    """One case through the editor's path, added to ``tally``."""
    from bench.infill_cases import parses_cleanly
    from lsp_server.completion.confidence_gate import first_line_confidence
    from lsp_server.completion.postprocess.context import CursorContext
    from lsp_server.completion.postprocess.pipeline import postprocess
    from lsp_server.completion.trigger import suppression_reason

    context = CursorContext(case.prefix, case.suffix, "python")
    typed = case.line[: len(case.line) - len(case.middle)]
    shown: dict[str, str | None] = {"empty": "", "above": case.line_above[len(typed) :]}
    if not case.line_above.startswith(typed):
        shown["above"] = None  # the line above does not even share the typed part
    asked = suppression_reason(context, settings) is None
    snippets = retrieval.snippets(case, budgets.context) if retrieval is not None and asked else []
    tally.snippets += len(snippets)
    raw = dict.fromkeys(MODES, "")
    confidence: dict[str, float] | None = None
    # Alternate which mode runs first: the second reuses the first's cached prompt blocks.
    for mode in MODES[:: 1 if index % 2 == 0 else -1] if asked else ():
        request = editor_request(case, f"{corpus}-{index}", snippets, settings, budgets)
        request.sampling.max_tokens = args.max_new_tokens
        raw[mode], last = await _suggest(served, request, mode, f"{corpus}-{index}-{mode}")
        tally.first_token_s[mode] += last.metrics.time_to_first_token or 0.0
        if mode == "healing":
            confidence = first_line_confidence(last.metrics.lines, last.metrics.first_token_logprob)
        tally.prompt_tokens += last.metrics.prompt_tokens if mode == "healing" else 0
    for mode in MODES:
        shown[mode] = (postprocess(context, raw[mode]).text or "") if raw[mode] else ""
    before = parses_cleanly(case.prefix + case.middle + case.suffix)
    parses = {
        name: guess is not None and parses_cleanly(case.prefix + guess + case.suffix) >= before
        for name, guess in shown.items()
    }
    tally.add(case, shown, raw, parses, asked, confidence)


def evaluate(args: argparse.Namespace) -> dict[str, Any]:
    """Load the model behind the daemon's request path and score every corpus."""
    import torch

    # Loading a served model turns autograd off for the thread (the daemon never trains); leaving
    # the context gives the caller its own grad mode back.
    with torch.no_grad():
        return _load_and_score(args)


def _load_and_score(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    from inference.backends.local_model import ServeSettings, load_served_model
    from inference.config import EngineConfig
    from inference.loading import ModelLoadError

    corpora = [c.strip() for c in args.corpora.split(",") if c.strip()]
    unknown = sorted(set(corpora) - set(CORPORA))
    if unknown:
        raise CommandError(f"--corpora: unknown {', '.join(unknown)}; choose from {', '.join(CORPORA)}")
    started = time.monotonic()
    torch.manual_seed(args.seed)
    from lsp_server.config import CompletionSettings

    longest = max(args.max_new_tokens, CompletionSettings().max_tokens)  # the block pass's budget
    settings = ServeSettings(args.model, None, args.device, max_new_tokens=longest + 16)
    try:
        served = load_served_model(settings, EngineConfig())
    except ModelLoadError as error:
        raise CommandError(f"--model {args.model}: {error}") from None
    if args.naive_prompt:
        from bench.naive_prompt import naive_served

        served = naive_served(served)
    figures: dict[str, Any] = {
        "model": str(args.model),
        "fim_template": served.fim.family,
        "context_tokens": args.context_tokens,
        "retrieval": args.index and not args.naive_prompt,
        "naive_prompt": args.naive_prompt,
        "model_name": served.info.model.name,
    }

    async def run_all() -> None:
        try:
            for corpus in corpora:
                held, cases = corpus_cases(corpus, args.cases, args.seed)

                def progress(tally: InfillTally, held: int = held, corpus: str = corpus) -> None:
                    figures[corpus] = {"held_out_files": held, "partial": True, **tally.figures()}
                    _write(args.json, figures)

                retrieval = _retrieval(corpus) if figures["retrieval"] else None
                try:
                    tally = await _score(served, cases, args, corpus, retrieval, progress)
                    figures[corpus] = {"held_out_files": held, **tally.figures()}
                    results = figures[corpus]["case_results"]
                    figures[corpus]["gate"] = gate_figures(results)
                    figures[corpus]["gate"]["shipped"] = shipped_point(figures["model_name"], results)
                    _write(args.json, figures)
                    count = args.cases if args.block_cases is None else args.block_cases
                    blocks = await corpus_blocks(served, corpus, count, args, retrieval)
                    inside = await corpus_inside_lines(
                        served, corpus, args.inside_line_cases, args, retrieval
                    )
                finally:
                    if retrieval is not None:
                        retrieval.close()
                figures[corpus]["block_results"] = blocks
                figures[corpus]["blocks"] = block_figures(blocks)
                if inside:
                    figures[corpus]["inside_line_results"] = inside
                    figures[corpus]["inside_line"] = inside_line_figures(inside)
        finally:
            await served.backend.close()

    asyncio.run(run_all())
    figures["seconds"] = round(time.monotonic() - started, 1)
    return figures


def _retrieval(corpus: str) -> Any:
    """The corpus indexed as a workspace, retrieving as the language server does."""
    from bench.cursor_retrieval import CorpusRetrieval

    return CorpusRetrieval(corpus_root(corpus))


def main(argv: list[str]) -> int:
    """Run the evaluation and print its table; exit code 0."""
    args = flags(__doc__.split("\n")[0]).parse_args(argv)
    if args.calibrate_from:
        print(calibrate_from_runs(args.calibrate_from))
        return 0
    if args.model is None:
        from inference.default_model import default_model

        try:
            args.model = default_model().target
        except ValueError as error:
            raise CommandError(str(error)) from None
    if not args.model.exists():
        raise CommandError(f"--model {args.model}: no such file or folder")
    figures = evaluate(args)
    print(report(figures))
    for corpus in CORPORA:
        if "inside_line" in figures.get(corpus, {}):
            print("\n".join(inside_line_report(corpus, figures[corpus]["inside_line"])))
    _write(args.json, figures)
    if args.calibrate:
        corpora = [name for name in CORPORA if name in figures]
        later = later_lines_entry({name: figures[name]["block_results"] for name in corpora})
        cases = {name: figures[name]["case_results"] for name in corpora}
        entry = calibrate(figures["model_name"], cases, later_lines=later)
        print(f"calibration of {figures['model_name']}: {entry.get('chosen')}")
    return 0
