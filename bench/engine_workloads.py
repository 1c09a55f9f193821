"""The prompts of the engine benchmarks (`bench/engine.py`), built from this repository's sources.

* `typing_prompts`: FIM prompts after each burst of typing a source file, as a cache-stable prompt
  builder lays them out (the typing session, and the completions with the draft model).
* `refactor_prompt`, `refactor_prompts`: "rename a symbol" prompts whose continuation copies most of
  the prompt (the refactor benchmarks of prompt lookup).
"""

from __future__ import annotations

import ast
import collections
import difflib
import keyword
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from inference.defaults import REPO_ROOT
from inference.loading import LoadedModel


def typing_prompts(loaded: LoadedModel, source: Path, burst_chars: int, budget: int, limit: int) -> list[str]:
    """FIM prompts after each of `limit` consecutive bursts of typing, cursor at the end of the text.

    The first third of `source` is already written; typing continues from there. The prefix window
    starts at a line boundary that jumps forward by half the budget when the prompt would exceed
    it, as a cache-stable prompt builder does (a window sliding by every line would defeat any
    prefix cache).
    """
    text = source.read_text(encoding="utf-8")
    lines = list(re.finditer(r".*\n", text))
    cuts: list[int] = []
    for line in lines[len(lines) // 3 :]:
        start, end = line.span()
        cuts += [*range(start + burst_chars, end, burst_chars), end]
    prompts, window_start = [], 0
    rel_path = str(source.relative_to(REPO_ROOT)) if source.is_relative_to(REPO_ROOT) else source.name
    for cut in cuts[:limit]:
        while True:
            prompt = loaded.fim.build(text[window_start:cut], "", path=rel_path)
            if len(loaded.tokenizer.encode(prompt)) <= budget:
                break
            window = text[window_start:cut].splitlines(keepends=True)
            window_start += sum(len(line) for line in window[: max(1, len(window) // 2)])
        prompts.append(prompt)
    return prompts


@dataclass(frozen=True)
class RefactorCase:
    """The refactor benchmark's prompt, the continuation a faithful rename would write, and the
    function's length in lines."""

    prompt: str
    continuation: str
    lines: int


def refactor_prompt(loaded: LoadedModel, max_tokens: int) -> RefactorCase | None:
    """A prompt whose natural continuation is a function of this repository with one symbol renamed:
    the original, then a comment announcing the rename and the renamed first line. Works with base
    models (no instruction following needed); the continuation copies the original almost token for
    token, which is what prompt lookup is for.

    Picks the function closest to 60 lines whose prompt and continuation fit in `max_tokens`, or
    returns None when nothing fits.
    """
    cases = refactor_prompts(loaded, max_tokens, 1, lambda lines: abs(lines - 60))
    return cases[0] if cases else None


def refactor_prompts(
    loaded: LoadedModel, max_tokens: int, count: int, preference: Callable[[int], float]
) -> list[RefactorCase]:
    """Up to `count` rename prompts (see `refactor_prompt`) from functions in different files, those
    whose line count `preference` ranks lowest first (ties broken by path and position)."""
    candidates: list[tuple[float, str, int, str]] = []
    packages = [REPO_ROOT / name for name in ("inference", "indexer", "lsp_server")]
    paths = sorted(p for package in packages for p in package.rglob("*.py") if "api" not in p.parts)
    for path in paths:
        source = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(source)
        except SyntaxError:  # a file being edited
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno:
                lines = node.end_lineno - node.lineno + 1
                code = textwrap.dedent(ast.get_source_segment(source, node, padded=True) or "")
                candidates.append((preference(lines), str(path), lines, code))
    cases: list[RefactorCase] = []
    used: set[str] = set()
    for _, file, lines, code in sorted(candidates, key=lambda c: (c[0], c[1])):
        if file in used:
            continue
        case = _rename_case(loaded, code, lines, max_tokens)
        if case is not None:
            cases.append(case)
            used.add(file)
        if len(cases) == count:
            break
    return cases


def _rename_case(loaded: LoadedModel, code: str, lines: int, max_tokens: int) -> RefactorCase | None:
    """The rename prompt of one function (its most frequent identifier renamed), if it fits."""
    names = collections.Counter(re.findall(r"\b[a-z_][a-z0-9_]{3,}\b", code))
    old = next((n for n, _ in names.most_common() if n != "self" and not keyword.iskeyword(n)), None)
    if old is None:
        return None
    renamed = re.sub(rf"\b{old}\b", f"{old}_renamed", code)
    first_line, _, rest = renamed.partition("\n")
    # The prompt ends after the first line's text, not its newline: a byte-level BPE merges a
    # newline with the next line's indentation, so a prompt ending in a lone newline token sits
    # where training text almost only had an end of text.
    prompt = f"{code}\n\n# The same function with `{old}` renamed to `{old}_renamed`:\n{first_line}"
    expected = len(loaded.tokenizer.encode(renamed))
    if len(loaded.tokenizer.encode(prompt)) + expected + 16 > max_tokens:
        return None
    return RefactorCase(prompt, "\n" + rest, lines)


def lines_reproduced(expected: str, output: str) -> int:
    """How many lines of `expected` the output writes verbatim and in order (difflib's matching
    blocks over whole lines): how faithful a copy the refactor's output is."""
    matcher = difflib.SequenceMatcher(None, expected.splitlines(), output.splitlines(), autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks())
