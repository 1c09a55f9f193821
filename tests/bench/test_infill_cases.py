"""Single-line infilling cases, context truncation, syntax check and the speculation replay."""

from __future__ import annotations

from pathlib import Path

from bench.corpus import collect_files
from bench.infill_cases import function_line_cases, parses_cleanly, truncate_around
from training.greedy import tokens_per_target_pass


def test_cases_hide_one_whole_function_line(tiny_corpus: Path) -> None:
    files = collect_files(tiny_corpus)
    texts = {f.path: f.text for f in files}
    cases = function_line_cases(files, 40, seed=3)
    assert len(cases) == 40
    assert cases == function_line_cases(files, 40, seed=3)
    for case in cases:
        assert case.file_text == texts[case.path]
        assert "\n" not in case.middle
        assert case.prefix.endswith("\n") and case.suffix.startswith("\n")
        assert case.line_above == case.prefix[:-1].rsplit("\n", 1)[-1]


def test_truncation_keeps_the_lines_next_to_the_hole() -> None:
    prefix = "".join(f"p{i}\n" for i in range(100))
    suffix = "".join(f"\ns{i}" for i in range(100))
    kept_prefix, kept_suffix = truncate_around(prefix, suffix, len, budget=100, prefix_share=0.75)
    # Each line costs its length and newline: the suffix fills its quarter (25: its empty first line
    # and s0..s7), the prefix the rest of the 100 (73: its empty last line and p82..p99).
    assert kept_suffix == "".join(f"\ns{i}" for i in range(8))
    assert kept_prefix == "".join(f"p{i}\n" for i in range(82, 100))


def test_parses_cleanly() -> None:
    assert parses_cleanly("def f(x):\n    return x\n")
    assert not parses_cleanly("def f(x):\n    return (x\n")


def test_tokens_per_target_pass_replays_greedy_speculation() -> None:
    assert tokens_per_target_pass([True] * 10, k=4) == 5.0  # passes accept 4+1, 4+1
    assert tokens_per_target_pass([False] * 3, k=4) == 1.0
    assert tokens_per_target_pass([True, False, True, True], k=4) == 2.0  # [T,F] then [T,T]
