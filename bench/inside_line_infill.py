"""The inside-a-line pass of ``codedraft bench model --inside-line-cases N``: at cursors with text after
them on their line (``bench/inside_line_cases.py``), what the language server shows, one line or more.

Each case is asked as the editor would ask it: the language server's request, shaped for the cursor by
``lsp_server.completion.block_or_line``, its settings' token budget, healing on, greedy; the reply goes
through the server's post-processing and ``block_or_line``'s decision (the confidence gate is left
out: this pass measures the shape of what is shown, the gate's own pass measures how sure it is). Next
to it, ``before``: what the server showed inside a line until 4 December, the request unshaped and
the post-processed reply shown whole, kept also where no part of it parsed as well as the file
without it (``prefer_parsable`` then kept the text as it was). A suggestion is exactly right when
it fills the hidden part and stops; its first line is exactly right when that line alone does.
"""

from __future__ import annotations

import sys
from typing import Any

from bench.cursor_cases import HELD_OUT_PERCENT, CursorCase, corpus_root
from bench.inside_line_cases import inside_line_cases
from bench.served_request import budgets, complete, editor_request


async def corpus_inside_lines(
    served: Any, corpus: str, count: int, args: Any, retrieval: Any
) -> list[dict[str, Any]]:
    """A record per case (see the module docstring) of ``count`` cursors inside a line in corpus
    ``corpus``'s held-out files; ``args`` are the bench's (seed, context tokens), ``retrieval`` the
    corpus's index (None: no snippets)."""
    from bench.corpus import collect_files, split_files
    from lsp_server.completion.block_or_line import BlockOrLine
    from lsp_server.config import CompletionSettings

    if count <= 0:
        return []
    settings = CompletionSettings()
    sizes = budgets(served, settings, args.context_tokens)
    _, held = split_files(collect_files(corpus_root(corpus)), HELD_OUT_PERCENT)
    owner = BlockOrLine()
    records = []
    for index, case in enumerate(inside_line_cases(held, count, args.seed)):
        records.append(
            await _score_case(served, case, f"{corpus}-inside-{index}", settings, sizes, retrieval, owner)
        )
        if (index + 1) % 10 == 0:
            print(f"  {corpus}: {index + 1}/{count} inside-a-line cases", file=sys.stderr, flush=True)
    return records


async def _score_case(
    served: Any,
    case: CursorCase,
    request_id: str,
    settings: Any,
    sizes: Any,
    retrieval: Any,
    owner: Any,
) -> dict[str, Any]:
    from inference.api.codedraft.v1 import inference_pb2 as pb
    from lsp_server.completion.block_or_line import quiet_reason
    from lsp_server.completion.postprocess.context import CursorContext
    from lsp_server.completion.postprocess.pipeline import postprocess
    from lsp_server.completion.trigger import suppression_reason

    context = CursorContext(case.prefix, case.suffix, "python")
    record: dict[str, Any] = {"path": case.path, "kind": case.kind, "truth": case.middle}
    if suppression_reason(context, settings) is not None:
        return {**record, "raw": "", "before": None, "shown": None, "reason": "not asked"}
    snippets = retrieval.snippets(case, sizes.context) if retrieval is not None else []
    request = editor_request(case, request_id, snippets, settings, sizes)
    request.speculation = pb.SPECULATION_MODE_OFF  # greedy output is the same with speculation
    request.token_healing = True
    shaped = owner.request(request, context, "off", served.info.model.name)
    raw, _ = await complete(served, request, request_id)
    now = raw
    if list(shaped.sampling.stop) != list(request.sampling.stop):
        now, _ = await complete(served, shaped, f"{request_id}-shaped")
    before = postprocess(context, raw, _before_filters()).text if raw else None
    verdict = postprocess(context, now) if now else None
    shown: str | None = None
    reason: str | None = "the model suggested nothing"
    if verdict is not None and verdict.text is None:
        reason = f"filtered ({verdict.dropped_by})"
    elif verdict is not None and verdict.text is not None:
        reason = quiet_reason(context, verdict.text)
        if reason is None:
            shown = owner.kept(context, verdict.text, None, "off", served.info.model.name)
    return {**record, "raw": raw, "before": before, "shown": shown, "reason": reason}


def _parsable_or_kept(context: Any, text: str) -> str | None:
    """``prefer_parsable`` as it was until 4 December: the suggestion as it is when no part parses."""
    from lsp_server.completion.postprocess.prefer_parsable import parsable_part

    return parsable_part(context, text) or text


def _before_filters() -> tuple[Any, ...]:
    from lsp_server.completion.postprocess.pipeline import DEFAULT_FILTERS
    from lsp_server.completion.postprocess.prefer_parsable import prefer_parsable

    return tuple(_parsable_or_kept if f is prefer_parsable else f for f in DEFAULT_FILTERS)


def inside_line_figures(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per variant (``before``, ``shown``): suggestions shown, of several lines, exactly right, first
    line exactly right; precision over those shown, coverage over all cases."""
    total = len(records)
    figures: dict[str, Any] = {"cases": total}
    for variant in ("before", "shown"):
        shown = [r for r in records if r[variant]]
        exact = sum(r[variant] == r["truth"] for r in shown)
        first = sum(r[variant].split("\n", 1)[0] == r["truth"] for r in shown)
        figures[variant] = {
            "shown": len(shown),
            "multi_line": sum("\n" in r[variant] for r in shown),
            "exact": exact,
            "first_line_exact": first,
            "precision": round(exact / len(shown), 3) if shown else None,
            "first_line_precision": round(first / len(shown), 3) if shown else None,
            "coverage": round(len(shown) / total, 3) if total else None,
        }
    return figures


def inside_line_report(corpus: str, figures: dict[str, Any]) -> list[str]:
    """Report lines for one corpus's inside-a-line figures."""
    lines = [f"{corpus}: inside a line, {figures['cases']} cursors"]
    for variant in ("before", "shown"):
        f = figures[variant]
        lines.append(
            f"  {variant:<7} shown {f['shown']} ({f['multi_line']} of several lines), exact {f['exact']} "
            f"(first line {f['first_line_exact']}); precision {f['precision']} "
            f"(first line {f['first_line_precision']}), coverage {f['coverage']}"
        )
    return lines
