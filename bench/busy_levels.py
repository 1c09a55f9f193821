"""`codedraft bench versus-llamacpp --busy 0,1,2`: each engine beside 0, 1, 2 other busy processes.

At each level :class:`~bench.busy_cores.CpuBurners` keeps that many cores busy while every engine, in
turn (the order alternating request by request, so all see the same machine), answers keystrokes of
the typing replay (first token, and the whole completion: the line the user waits for) and decodes a
long greedy generation. Engines: codedraft with its CPU threads following the cores left free (as
the daemon runs, `inference/cpu_threads.py`), codedraft with the thread count fixed (as before), and
llama.cpp with its fixed thread count. Each figure is printed with its ratio to the same engine's
figure at the first level (the quiet one when the levels start at 0), which the machine's own speed
cancels out of.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from bench.busy_cores import CpuBurners
from bench.engine_workloads import typing_prompts
from bench.llamacpp_runner import Timed
from inference.loading import LoadedModel

WARM_UP_DECODE_TOKENS = 32
"""Decoded by every engine before a level is measured: the adaptive engine samples the load meanwhile."""


class Runner(Protocol):
    """An engine the levels drive: greedy tokens after a prompt, timed."""

    def generate(self, prompt_ids: list[int], max_tokens: int) -> Timed: ...


@dataclass
class LevelFigures:
    """One engine at one busy level: first token and whole completion after each keystroke (ms) and
    decode rates (tokens/s)."""

    first_ms: list[float] = field(default_factory=list)
    line_ms: list[float] = field(default_factory=list)
    decode: list[float] = field(default_factory=list)

    def medians(self) -> tuple[float, float, float]:
        """(first token median, completion median, decode mean)."""
        return (
            statistics.median(self.first_ms),
            statistics.median(self.line_ms),
            statistics.fmean(self.decode),
        )


def measure_level(
    runners: dict[str, Runner], prompts: Sequence[list[int]], decode_ids: list[int], args: argparse.Namespace
) -> dict[str, LevelFigures]:
    """Every engine on the same keystroke prompts (the first only warms their caches) and decodes."""
    names = list(runners)
    figures = {name: LevelFigures() for name in names}
    for name in names:
        runners[name].generate(decode_ids, WARM_UP_DECODE_TOKENS)
        runners[name].generate(prompts[0], 1)
    for i, prompt in enumerate(prompts[1:]):
        for name in names if i % 2 else names[::-1]:
            timed = runners[name].generate(prompt, args.completion_tokens)
            figures[name].first_ms.append(1000 * timed.first_token_s)
            figures[name].line_ms.append(1000 * timed.total_s)
    for i in range(args.repeats):
        for name in names if i % 2 else names[::-1]:
            figures[name].decode.append(
                runners[name].generate(decode_ids, args.decode_tokens).decode_tokens_per_s
            )
    return figures


def run_busy_levels(
    loaded: LoadedModel, runners: dict[str, Runner], levels: list[int], args: argparse.Namespace
) -> dict[int, dict[str, LevelFigures]]:
    """Every level in turn, burners running; returns the figures by level and engine, and prints them."""
    per_level = args.requests + 1
    budget = min(loaded.config.max_position_embeddings - 64, args.context_tokens)
    texts = typing_prompts(loaded, args.file, args.burst_chars, budget, per_level * len(levels))
    if len(texts) < per_level * len(levels):
        raise SystemExit(f"{args.file} is too short for {len(levels)} levels of {args.requests} keystrokes")
    prompts = [loaded.tokenizer.encode(text) for text in texts]
    decode_ids = loaded.tokenizer.encode(args.file.read_text(encoding="utf-8"))[-256:]
    results: dict[int, dict[str, LevelFigures]] = {}
    for index, level in enumerate(levels):
        with CpuBurners(level):
            results[level] = measure_level(
                runners, prompts[index * per_level : (index + 1) * per_level], decode_ids, args
            )
    print_busy_table(results, args)
    return results


def print_busy_table(results: dict[int, dict[str, LevelFigures]], args: argparse.Namespace) -> None:
    """One row per level and engine; the ratios are to the same engine at the first level."""
    levels = list(results)
    base = results[levels[0]]
    print(
        f"\nbusy levels: {args.requests} keystrokes ({args.completion_tokens}-token completions) and "
        f"{args.repeats} decodes of {args.decode_tokens} tokens per engine per level; "
        f"'x quiet' is the figure over the same engine's at {levels[0]} busy core(s) "
        "(time: above 1 is slower; decode: below 1 is slower)"
    )
    print(
        f"  {'busy':>4}  {'engine':<32}{'first token ms':>15}{'line ms':>10}{'decode tok/s':>14}"
        f"{'first x quiet':>15}{'line x quiet':>14}{'decode x quiet':>16}"
    )
    for level in levels:
        for name, figures in results[level].items():
            first, line, decode = figures.medians()
            first0, line0, decode0 = base[name].medians()
            print(
                f"  {level:>4}  {name:<32}{first:>15.1f}{line:>10.1f}{decode:>14.1f}"
                f"{first / first0:>15.2f}{line / line0:>14.2f}{decode / decode0:>16.2f}"
            )
