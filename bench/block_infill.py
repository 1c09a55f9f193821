"""The block pass of ``codedraft bench model``: at block cursors (``bench/block_cases.py``), how often
the later lines of the block the language server asks for are exactly right.

Each case is asked as the editor would ask it: the language server's request and its shaping for the
cursor (``lsp_server.completion.block_or_line``: no stop at the line end where it asks for a block),
its settings' token budget, healing on, greedy; the reply goes through the server's post-processing.
Each line of what is left is compared with the hidden body's line at the same place (exact, trailing
spaces aside). A later line (after the first non-blank one) is recorded with whether it is right and
the figures ``block_or_line`` would judge it by, so that ``bench/block_curve.py`` can say how right
the later lines shown are as the threshold moves. Each is also recorded with two baselines at the same
place: the body's line there is blank (what showing nothing gets right), and it repeats the body's line
above it (a copy of the line above).
"""

from __future__ import annotations

import math
import sys
from typing import Any

from bench.block_cases import BlockCase, block_cases
from bench.cursor_cases import HELD_OUT_PERCENT, CursorCase, corpus_root
from bench.served_request import budgets, complete, editor_request


def _same(shown: str, truth: str) -> bool:
    return shown.rstrip() == truth.rstrip()


async def corpus_blocks(
    served: Any, corpus: str, count: int, args: Any, retrieval: Any
) -> list[dict[str, Any]]:
    """A record per case the language server asks a block for (see the module docstring), of
    ``count`` block cursors in corpus ``corpus``'s held-out files; ``args`` are the bench's (seed,
    context tokens), ``retrieval`` the corpus's index (None: no snippets)."""
    from bench.corpus import collect_files, split_files
    from lsp_server.config import CompletionSettings

    if count <= 0:
        return []
    settings = CompletionSettings()
    sizes = budgets(served, settings, args.context_tokens)
    _, held = split_files(collect_files(corpus_root(corpus)), HELD_OUT_PERCENT)
    cases = block_cases(held, count, args.seed)
    records = []
    for index, case in enumerate(cases):
        record = await _score_case(served, case, f"{corpus}-block-{index}", settings, sizes, retrieval)
        if record is not None:
            records.append(record)
        if (index + 1) % 10 == 0:
            print(f"  {corpus}: {index + 1}/{len(cases)} block cases", file=sys.stderr, flush=True)
    return records


async def _score_case(
    served: Any,
    case: BlockCase,
    request_id: str,
    settings: Any,
    sizes: Any,
    retrieval: Any,
) -> dict[str, Any] | None:
    from inference.api.codedraft.v1 import inference_pb2 as pb
    from lsp_server.completion.block_or_line import (
        BLOCK,
        LATER_FEATURES,
        cursor_shape,
        later_line_values,
        shaped_request,
    )
    from lsp_server.completion.postprocess.context import CursorContext
    from lsp_server.completion.postprocess.pipeline import postprocess
    from lsp_server.completion.trigger import suppression_reason

    context = CursorContext(case.prefix, case.suffix, "python")
    shape = cursor_shape(context)
    if shape != BLOCK or suppression_reason(context, settings) is not None:
        return None
    snippets = []
    if retrieval is not None:
        snippets = retrieval.snippets(
            CursorCase(case.path, case.prefix, "", case.suffix, "", "", "block"), sizes.context
        )
    request = editor_request(case, request_id, snippets, settings, sizes)
    request = shaped_request(request, shape)
    request.speculation = pb.SPECULATION_MODE_OFF  # greedy output is the same with speculation
    request.token_healing = True
    text, last = await complete(served, request, request_id)
    shown = (postprocess(context, text).text or "") if text else ""
    rows = shown.split("\n")
    body = case.body
    later: list[dict[str, Any]] = []
    values = {
        feature: dict(later_line_values(rows, last.metrics.lines, feature)) for feature in LATER_FEATURES
    }
    for row in values[LATER_FEATURES[0]]:
        truth = body[row] if row < len(body) else None
        later.append(
            {
                "row": row,
                "right": truth is not None and _same(rows[row], truth),
                "blank": truth is not None and not truth.strip(),
                "above": truth is not None and truth.strip() != "" and _same(body[row - 1], truth),
                **{feature: _finite(values[feature][row]) for feature in LATER_FEATURES},
            }
        )
    first = next((row for row, line in enumerate(rows) if line.strip()), None)
    return {
        "path": case.path,
        "body_lines": len(body),
        "shown_lines": len([row for row in rows if row.strip()]),
        "first_exact": first is not None and first < len(body) and _same(rows[first], body[first]),
        "shown": shown,
        "truth": "\n".join(body[: len(rows) + 1]),
        "later": later,
    }


def _finite(value: float) -> float | None:
    """JSON holds no infinities: a line without figures is recorded as None."""
    return None if math.isinf(value) else round(value, 4)
