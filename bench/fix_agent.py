"""The fix agent as a user meets it: ``codedraft bench fix [--model PATH]``.

Each case of ``bench/fix_cases.py`` (a one-line bug and its failing test) is written to a fresh
workspace and fixed as ``codedraft fix FILE:LINE --check CHECK`` fixes it: the same agent loop, the
same sandbox, the same daemon requests, on one daemon (the default model, or ``--model``). Printed
per case: whether a verified fix came, in how many steps, and what each attempt came to; then per
model the fixed rate and the steps used. ``--json FILE`` keeps every attempt's reply and outcome.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.fix_cases import CASES, CHECK, FixCase

DEFAULT_STEPS = 4  # codedraft fix's and the editor's default


def outcome_kind(outcome: str) -> str:
    """An attempt's outcome in one word: passed, failed (the check), unchanged (the reply gave the code
    back as it was), unparsed (no edit could be read, or the code did not parse), rejected (other)."""
    if outcome.startswith("the check passed"):
        return "passed"
    if outcome.startswith("the check failed"):
        return "failed"
    if "changes 0 lines" in outcome or "changes nothing" in outcome:
        return "unchanged"
    if any(words in outcome for words in ("holds no", "no complete", "not parse", "lines; one corrected")):
        return "unparsed"
    return "rejected"


async def _run_case(
    case: FixCase, client: Any, use_tools: bool, parameters: int, steps: int, folder: Path, verbose: bool
) -> dict[str, Any]:
    from lsp_server.agent.edits import Target
    from lsp_server.agent.loop import FixTask, run_fix
    from lsp_server.agent.model_calls import daemon_generate
    from lsp_server.agent.model_fit import reply_form
    from lsp_server.agent.sandbox import Sandbox

    root = folder / case.name
    root.mkdir()
    for relative, text in case.files.items():
        (root / relative).write_text(text)
    target = Target(case.path, case.line - 1, case.line - 1)
    task = FixTask(
        root,
        target,
        CHECK,
        step_limit=steps,
        time_limit_s=600.0,
        use_tools=use_tools,
        reply_form=reply_form(parameters, target),
    )
    started = time.monotonic()

    def progress(message: str) -> None:
        if verbose:
            print(f"  {case.name}: {message}", file=sys.stderr, flush=True)

    generate = daemon_generate(client.generate, "bench-fix", reply_form=task.reply_form)
    result = await run_fix(task, generate, Sandbox("auto"), progress)
    return {
        "case": case.name,
        "kind": case.kind,
        "status": result.status,
        "steps": len(result.attempts),
        "seconds": round(time.monotonic() - started, 1),
        "attempts": [
            {"outcome": a.outcome, "kind": outcome_kind(a.outcome), "reply": a.reply} for a in result.attempts
        ],
        "diff": result.diff(),
    }


async def _run(args: argparse.Namespace, cases: list[FixCase]) -> dict[str, Any]:
    from inference.client import InferenceClient
    from inference.daemon_launcher import PrivateDaemon
    from lsp_server.model_room import serving_model

    daemon = PrivateDaemon(args.model, prefix="codedraft-bench-fix-", device="cpu" if args.cpu else None)
    try:
        async with InferenceClient(daemon.address) as client:
            await daemon.wait_ready(client)
            info = serving_model(await client.model_info(timeout=10.0), "generate_chat")
            rows = []
            with tempfile.TemporaryDirectory(prefix="codedraft-bench-fix-") as folder:
                for case in cases:
                    row = await _run_case(
                        case,
                        client,
                        info.supports_tools,
                        info.model.parameters,
                        args.steps,
                        Path(folder),
                        args.verbose,
                    )
                    rows.append(row)
                    kinds = " ".join(a["kind"] for a in row["attempts"])
                    head = f"{case.name:<12}{case.kind:<16}{row['status']:<17}"
                    print(f"{head}{row['steps']:>5}{row['seconds']:>8.1f}  {kinds}", flush=True)
    finally:
        daemon.stop(timeout_s=60)
    fixed = [row for row in rows if row["status"] == "verified"]
    attempts = [a["kind"] for row in rows for a in row["attempts"]]
    return {
        "model": info.model.name,
        "parameters": info.model.parameters,
        "cases": len(rows),
        "fixed": len(fixed),
        "steps_limit": args.steps,
        "steps_used": sum(row["steps"] for row in rows),
        "steps_per_fix": round(sum(row["steps"] for row in fixed) / len(fixed), 2) if fixed else None,
        "attempts": {
            kind: attempts.count(kind) for kind in ("passed", "failed", "unchanged", "unparsed", "rejected")
        },
        "rows": rows,
    }


def main(argv: list[str]) -> int:
    """``codedraft bench fix``: prints one line per case and the model's fixed rate and steps."""
    parser = argparse.ArgumentParser(prog="codedraft bench fix", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model",
        type=Path,
        default=None,
        help="model folder or GGUF file (default: the daemon's default model)",
    )
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="most attempts per bug (default: 4)")
    parser.add_argument(
        "--cases",
        default="",
        help="comma-separated case names (default: all: " + ",".join(c.name for c in CASES) + ")",
    )
    parser.add_argument("--cpu", action="store_true", help="serve the model on the CPU even with a GPU")
    parser.add_argument(
        "--json", type=Path, default=None, help="write every attempt's reply and outcome here"
    )
    parser.add_argument("--verbose", action="store_true", help="print each step's outcome on stderr")
    parser.add_argument(
        "--record",
        action="store_true",
        help="store the model's fixed count in lsp_server/agent/fix_bench_results.json (all cases only), "
        "where the language server reads which models fix nothing",
    )
    args = parser.parse_args(argv)
    wanted = [name for name in args.cases.split(",") if name]
    unknown = sorted(set(wanted) - {c.name for c in CASES})
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    cases = [c for c in CASES if not wanted or c.name in wanted]
    print(f"{'case':<12}{'bug':<16}{'result':<17}{'steps':>5}{'s':>8}  attempts")
    figures = asyncio.run(_run(args, cases))
    print(
        f"\n{figures['model']} ({figures['parameters'] / 1e6:.1f}M parameters): fixed {figures['fixed']}/"
        f"{figures['cases']}, {figures['steps_used']} steps used (at most {args.steps} per bug), "
        f"{figures['steps_per_fix'] or '-'} per fix; attempts "
        + ", ".join(f"{kind} {count}" for kind, count in figures["attempts"].items())
    )
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    if args.record and not wanted:
        from lsp_server.agent.model_fit import record

        stored = {key: figures[key] for key in ("fixed", "cases", "steps_limit", "steps_used")}
        record(figures["model"], figures["parameters"], {**stored, "measured": time.strftime("%Y-%m-%d")})
    return 0
