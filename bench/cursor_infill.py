"""Any model on single-line infilling at realistic cursors: ``codedraft bench model --model PATH``.

Cases come from held-out files (the training recipe's path-hash split) of two corpora: the standard
library, and the Python source of numpy, a dependency of codedraft and so present wherever it is
installed, and not the standard library. A case hides the rest of one line of a function body, with
the cursor where an editor user has it: after the line's indentation, or inside an identifier
(half-typed), or at the start of a blank line. The prompt goes through the daemon's own request path
(`prepare_complete`: the model's FIM layout or its prefix-only prompt and suffix stop, truncation,
token healing) and the engine, greedy, stopping at the end of the line.

Scored: exact match of the completion's first line with the hidden rest of the line, and the share
of completions after which the file parses as it did before (tree-sitter), with token healing on and
off, next to two baselines: an empty completion and a copy of the line above. Prompts are cut to
``--context-tokens`` around the cursor (whole lines) so a 135M model runs 100 cases of both corpora on
two CPU cores in a few minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codedraft.errors import CommandError

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")
_HELD_OUT_PERCENT = 3
CORPORA = ("stdlib", "numpy")


@dataclass(frozen=True)
class CursorCase:
    """``prefix + middle + suffix`` is the file; the cursor is at the end of ``prefix``."""

    path: str
    prefix: str
    middle: str
    suffix: str
    line: str
    line_above: str
    kind: str  # "indent", "identifier" or "blank"


def cursor_cases(files: list[Any], count: int, seed: int) -> list[CursorCase]:
    """Cases on random function-body lines, the cursor placed as described in the module docstring."""
    from training.infill_cases import function_line_cases

    rng = random.Random(seed)
    cases = []
    for case in function_line_cases(files, count, seed):
        line = case.middle
        indent = len(line) - len(line.lstrip())
        names = [m for m in _IDENTIFIER.finditer(line, indent)]
        if not line.strip():
            cut, kind = 0, "blank"
        elif names and rng.random() < 0.5:
            name = rng.choice(names)
            cut, kind = rng.randint(name.start() + 1, name.end() - 1), "identifier"
        else:
            cut, kind = indent, "indent"
        cases.append(
            CursorCase(
                case.path,
                case.prefix + line[:cut],
                line[cut:],
                case.suffix,
                line,
                case.line_above,
                kind,
            )
        )
    return cases


def _corpus_root(name: str) -> Path:
    from training.corpus import stdlib_root

    if name == "stdlib":
        return stdlib_root()
    import numpy

    return Path(numpy.__file__).parent


async def _complete(served: Any, request: Any, request_id: str) -> tuple[str, Any]:
    from inference.engine.sequence import Request
    from inference.server.prepare import prepare_complete

    prepared = prepare_complete(request, served)
    fitted, _ = prepared.fit()
    engine_request = Request(
        request_id,
        prompt_token_ids=fitted.token_ids,
        sampling=prepared.sampling,
        kind=prepared.kind,
        spec_mode=prepared.spec_mode,
        healing=fitted.healing,
    )
    pieces, last = [], None
    async for output in served.backend.generate(engine_request):
        pieces.append(output.delta)
        last = output
    return "".join(pieces), last


async def _score(
    served: Any, cases: list[CursorCase], args: argparse.Namespace, corpus: str
) -> dict[str, Any]:
    from inference.api.codedraft.v1 import inference_pb2 as pb
    from training.infill_cases import parses_cleanly, truncate_around

    tokenizer = served.tokenizer
    exact = {"healing": 0, "no_healing": 0, "empty": 0, "above": 0}
    valid = dict.fromkeys(exact, 0)
    by_kind: dict[str, list[int]] = {}
    first_token_s = {"healing": 0.0, "no_healing": 0.0}
    for index, case in enumerate(cases):
        prefix, suffix = truncate_around(
            case.prefix, case.suffix, lambda s: len(tokenizer.encode(s)), args.context_tokens
        )
        before = parses_cleanly(case.prefix + case.middle + case.suffix)
        guesses: dict[str, str | None] = {
            "empty": "",
            "above": case.line_above[len(case.line) - len(case.middle) :],
        }
        if not case.line_above.startswith(case.line[: len(case.line) - len(case.middle)]):
            guesses["above"] = None  # the line above does not even share the typed part
        # Alternate which mode runs first: the second reuses the first's cached prompt blocks.
        for mode in ("healing", "no_healing")[:: 1 if index % 2 == 0 else -1]:
            request = pb.CompleteRequest(
                prefix=prefix,
                suffix=suffix,
                path=case.path,
                sampling=pb.SamplingParams(max_tokens=args.max_new_tokens, stop=["\n"]),
                speculation=pb.SPECULATION_MODE_OFF,
                token_healing=mode == "healing",
            )
            text, last = await _complete(served, request, f"{corpus}-{index}-{mode}")
            guesses[mode] = text.split("\n", 1)[0]
            if last is not None and last.metrics.time_to_first_token is not None:
                first_token_s[mode] += last.metrics.time_to_first_token
        for name, guess in guesses.items():
            hit = guess is not None and guess.rstrip() == case.middle.rstrip()
            exact[name] += hit
            valid[name] += guess is not None and parses_cleanly(case.prefix + guess + case.suffix) >= before
            if name == "healing":
                by_kind.setdefault(case.kind, []).append(int(hit))
        if (index + 1) % 10 == 0:
            print(
                f"  {corpus}: {index + 1}/{len(cases)} cases, exact with healing {exact['healing']}, "
                f"without {exact['no_healing']}",
                file=sys.stderr,
                flush=True,
            )
    n = len(cases)
    rate = lambda hits: round(hits / n, 4) if n else float("nan")  # noqa: E731
    return {
        "cases": n,
        "cursor_kinds": {kind: len(hits) for kind, hits in sorted(by_kind.items())},
        "exact_match": {name: rate(hits) for name, hits in exact.items()},
        "exact_match_healing_by_kind": {
            kind: round(sum(hits) / len(hits), 4) for kind, hits in sorted(by_kind.items())
        },
        "parses": {name: rate(hits) for name, hits in valid.items()},
        "mean_first_token_ms": {m: round(s / n * 1000, 1) if n else None for m, s in first_token_s.items()},
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codedraft bench model --model PATH", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--model", type=Path, required=True, help="model folder (Hugging Face layout) or file"
    )
    parser.add_argument("--cases", type=int, default=100, help="cursor cases per corpus")
    parser.add_argument(
        "--corpora", default=",".join(CORPORA), help=f"comma-separated, of {', '.join(CORPORA)}"
    )
    parser.add_argument("--context-tokens", type=int, default=768, help="prompt text kept around the cursor")
    parser.add_argument("--max-new-tokens", type=int, default=32, help="per completion")
    parser.add_argument("--seed", type=int, default=0, help="seed of the case selection")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    return parser


def evaluate(args: argparse.Namespace) -> dict[str, Any]:
    """Load the model behind the daemon's request path and score every corpus."""
    import torch

    # Loading a served model turns autograd off for the thread (the daemon never trains); leaving
    # the context gives the caller its own grad mode back.
    with torch.no_grad():
        return _load_and_score(args)


def _load_and_score(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    from inference.config import EngineConfig
    from inference.server.model_loader import ModelLoadFailed, ServeSettings, load_served_model

    try:  # the training package comes with a source checkout
        from training.corpus import collect_files, split_files
    except ImportError as exc:
        raise CommandError(f"bench model runs from a source checkout: {exc}") from exc
    corpora = [c.strip() for c in args.corpora.split(",") if c.strip()]
    unknown = sorted(set(corpora) - set(CORPORA))
    if unknown:
        raise CommandError(f"--corpora: unknown {', '.join(unknown)}; choose from {', '.join(CORPORA)}")
    started = time.monotonic()
    torch.manual_seed(args.seed)
    settings = ServeSettings(args.model, None, args.device, max_new_tokens=args.max_new_tokens + 16)
    try:
        served = load_served_model(settings, EngineConfig(kv_cache_mb=256.0))
    except ModelLoadFailed as error:
        raise CommandError(f"--model {args.model}: {error}") from None
    figures: dict[str, Any] = {
        "model": str(args.model),
        "fim_template": served.fim.family,
        "context_tokens": args.context_tokens,
    }

    async def run_all() -> None:
        try:
            for corpus in corpora:
                _, held = split_files(collect_files(_corpus_root(corpus)), _HELD_OUT_PERCENT)
                cases = cursor_cases(held, args.cases, args.seed)
                figures[corpus] = {"held_out_files": len(held), **await _score(served, cases, args, corpus)}
        finally:
            await served.backend.close()

    asyncio.run(run_all())
    figures["seconds"] = round(time.monotonic() - started, 1)
    return figures


def report(figures: dict[str, Any]) -> str:
    """The table the README and the model card show."""
    lines = [
        f"single-line infilling at realistic cursors, {figures['model']} "
        f"({figures['fim_template']} prompt, {figures['context_tokens']} tokens around the cursor)",
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
        first = f["mean_first_token_ms"]
        lines.append(
            f"         with healing by cursor: {kinds}; first token {first['healing']} ms "
            f"(no healing {first['no_healing']} ms)"
        )
    lines.append(f"({figures['seconds']} s)")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Run the evaluation and print its table; exit code 0."""
    args = _parser().parse_args(argv)
    if not args.model.exists():
        raise CommandError(f"--model {args.model}: no such file or folder")
    figures = evaluate(args)
    print(report(figures))
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0
