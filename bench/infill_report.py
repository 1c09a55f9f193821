"""The table of ``codedraft bench model``: per corpus, the first line's exactness and parses with and
without token healing against the baselines, the confidence gate's curve (``bench/confidence_curve.py``)
and the later lines at block cursors (``bench/block_curve.py``)."""

from __future__ import annotations

from typing import Any

from bench.block_curve import block_report_lines
from bench.confidence_curve import report_lines
from bench.cursor_cases import CORPORA


def _window(figures: dict[str, Any]) -> str:
    if figures.get("naive_prompt"):
        return "naive: the window's text before the cursor only, as llama.cpp is given it"
    if figures["context_tokens"] > 0:
        return f"{figures['context_tokens']} document tokens around the cursor"
    if figures.get("retrieval"):
        return "the language server's window and retrieved snippets"
    return "the language server's window"


def report(figures: dict[str, Any]) -> str:
    """The table docs/benchmarks.md and the model card show."""
    lines = [
        f"single-line infilling at realistic cursors, {figures['model']} "
        f"({figures['fim_template']} prompt, {_window(figures)})",
        "corpus   cases  exact: healing  no healing  empty  line above | parses: healing  no healing  empty",
    ]
    for corpus in CORPORA:
        if corpus not in figures:
            continue
        f = figures[corpus]
        e, p = f["exact_match"], f["parses"]
        lines.append(
            f"{corpus:<8} {f['cases']:>5}  {e['healing']:>13.1%}  {e['no_healing']:>10.1%}"
            f"  {e['empty']:>5.1%}  {e['above']:>10.1%} | {p['healing']:>14.1%}  {p['no_healing']:>10.1%}"
            f"  {p['empty']:>5.1%}"
        )
        kinds = ", ".join(
            f"{kind} {f['exact_match_healing_by_kind'][kind]:.0%} of {count}"
            for kind, count in f["cursor_kinds"].items()
        )
        first, raw = f["mean_first_token_ms"], f["exact_match_before_postprocessing"]
        lines.append(
            f"         with healing by cursor: {kinds}; before post-processing: healing "
            f"{raw['healing']:.1%}, no healing {raw['no_healing']:.1%}; not asked (in a comment): "
            f"{f['not_asked']}; prompt {f['mean_prompt_tokens']} tokens, first token "
            f"{first['healing']} ms (no healing {first['no_healing']} ms)"
        )
        lines.extend(report_lines(corpus, f["gate"], {"empty": e["empty"], "line above": e["above"]}))
        lines.extend(block_report_lines(corpus, f.get("blocks", {})))
    lines.append(f"({figures['seconds']} s)")
    return "\n".join(lines)
