"""Next-edit decoding benchmark (`codedraft bench next-edit-decode`): region rewrites through the
daemon's PredictEdit path, prompt lookup with the request's draft limit against plain decoding.

One process loads the model (the default: SmolLM2-135M's GGUF) and runs the daemon's request runner
in-process (PredictEdit without the gRPC transport). Cases are regions of `--lines` lines from
stdlib files, each starting at a function's ``def`` line, where one of its parameters is used again
in the region; the user's edit renamed that parameter in the ``def`` line (the history holds the
edit as a unified diff, the region shows it done, the original region shows it undone), so the model
is asked to carry the rename on to its uses.

Reported side by side, greedy, on the same cases in the same run:
* decoding tokens/s of SPECULATION_MODE_NGRAM (prompt lookup, draft limit = the region's tokens)
  and of SPECULATION_MODE_AUTO (what a request leaving speculation unset gets) over
  SPECULATION_MODE_OFF, target forward passes per generated token, and that every reply is
  identical (asserted: rewritten region, parsed flag, finish reason and generated token count);
* after a keystroke (one character typed in the region just before the cursor, sent again in the
  same session): prompt tokens computed against the prompt's length (the prompt runs from stable to
  volatile, so the cache keeps all but its tail).
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import re
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.served_model import ServedModel
from inference.server.prepare_next_edit import prepare_predict_edit

STDLIB_FILES = (
    "textwrap.py",
    "string.py",
    "heapq.py",
    "bisect.py",
    "json/encoder.py",
    "shlex.py",
    "fnmatch.py",
)


@dataclass(frozen=True)
class Case:
    """One region rewrite: the request, and where it came from."""

    source: str
    request: pb.PredictEditRequest


def rename_cases(count: int, lines: int) -> list[Case]:
    """Up to `count` regions of `lines` lines, each starting at a function's ``def`` line and taken
    from the files in turn, where a parameter is used again in the region: the user's edit renamed
    it in the ``def`` line (the model should carry the rename to its uses)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    starts: list[list[tuple[str, list[str], int]]] = []
    for name in STDLIB_FILES:
        text = (stdlib / name).read_text(encoding="utf-8").splitlines(keepends=True)
        found = []
        for index, line in enumerate(text):
            if line.lstrip().startswith("def ") and index + lines <= len(text):
                case = _rename_case(name, text, index, lines, f"{name}:{index + 1}")
                if case is not None:
                    found.append((name, text, index))
        starts.append(found)
    cases: list[Case] = []
    for round_ in range(max(len(found) for found in starts)):
        for found in starts:
            if round_ < len(found) and len(cases) < count:
                name, text, index = found[round_]
                case = _rename_case(name, text, index, lines, f"{name}:{index + 1}")
                assert case is not None
                cases.append(case)
    return cases


def _rename_case(name: str, text: list[str], start: int, lines: int, session: str) -> Case | None:
    window = text[start : start + lines]
    header = window[0]
    params = re.findall(r"[(,]\s*\*{0,2}([a-z_][a-z0-9_]*)", header.split(")")[0])
    code = "".join(window[1:])
    used = [p for p in params if p != "self" and len(re.findall(rf"\b{p}\b", code)) >= 2]
    if not used:
        return None
    old = used[0]
    new = f"{old}_value"
    edited = [re.sub(rf"\b{old}\b", new, header, count=1), *window[1:]]
    diff = "".join(difflib.unified_diff(window, edited, f"a/{name}", f"b/{name}", n=1))
    cursor = edited[0].index(new) + len(new)
    request = pb.PredictEditRequest(
        session_id=session,
        path=name,
        language="python",
        region="".join(edited),
        cursor=cursor,
        original_region="".join(window),
        context_before="".join(text[max(0, start - 10) : start]),
        context_after="".join(text[start + lines : start + lines + 5]),
        history=[
            pb.PastEdit(
                path=name,
                diff=diff,
                hunks=[pb.EditHunk(original=header.rstrip("\n"), updated=edited[0].rstrip("\n"))],
            )
        ],
    )
    return Case(name, request)


def _keystroke(request: pb.PredictEditRequest) -> pb.PredictEditRequest:
    """The request after one more character typed just before the cursor."""
    typed = pb.PredictEditRequest()
    typed.CopyFrom(request)
    region, cursor = request.region, request.cursor
    typed.region = region[:cursor] + "x" + region[cursor:]
    typed.cursor = cursor + 1
    return typed


def _changed_tail(served: ServedModel, before: pb.PredictEditRequest, after: pb.PredictEditRequest) -> int:
    """Tokens of `after`'s prompt from the first token id that differs from `before`'s prompt on: what
    a cache of `before`'s prompt cannot hold."""
    old, new = (prepare_predict_edit(r, served).prepared.build().token_ids for r in (before, after))
    same = next(
        (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new))
    )
    return len(new) - same


@dataclass
class Totals:
    generated: int = 0
    decode_s: float = 0.0
    forward_passes: int = 0
    proposed: int = 0
    accepted: int = 0

    def add(self, figures: pb.RequestFigures) -> None:
        self.generated += figures.generated_tokens
        self.decode_s += max(0.0, figures.total_ms - figures.time_to_first_token_ms) / 1000
        self.forward_passes += figures.target_forward_passes
        self.proposed += figures.draft_proposed
        self.accepted += figures.draft_accepted

    @property
    def tokens_per_s(self) -> float:
        return self.generated / self.decode_s if self.decode_s else 0.0


def _decode_rate(figures: pb.RequestFigures) -> float:
    """Generated tokens per second after the first token (the prompt's time left out)."""
    return figures.generated_tokens / max(1e-9, (figures.total_ms - figures.time_to_first_token_ms) / 1000)


def _same_reply(a: pb.PredictEditReply, b: pb.PredictEditReply) -> bool:
    return (a.rewritten_region, a.parsed, a.finish_reason, a.figures.generated_tokens) == (
        b.rewritten_region,
        b.parsed,
        b.finish_reason,
        b.figures.generated_tokens,
    )


async def run(args: argparse.Namespace) -> int:
    from inference.backends.local_model import ServeSettings, load_served_model
    from inference.server.request_runner import RequestRunner

    runner = RequestRunner()
    started = time.perf_counter()
    runner.attach(
        await asyncio.to_thread(
            load_served_model,
            ServeSettings(args.model, None, "cpu", kv_cache_mb=args.kv_cache_mb, weights=args.weights),
        )
    )
    served = runner.ready().completion
    print(
        f"model {args.model.name} ({served.info.model.parameters / 1e6:.0f}M parameters, {served.weights}), "
        f"format {served.next_edit.name}, loaded in {time.perf_counter() - started:.1f} s"
    )
    cases = rename_cases(args.regions + 1, args.lines)
    warmup, cases = cases[0], cases[1:]
    # auto: what a request that leaves speculation unset gets (prompt lookup, paused where it does not pay)
    modes = {
        "off": pb.SPECULATION_MODE_OFF,
        "ngram": pb.SPECULATION_MODE_NGRAM,
        "auto": pb.SPECULATION_MODE_AUTO,
    }

    async def ask(request: pb.PredictEditRequest, mode: int, rid: str) -> pb.PredictEditReply:
        sent = pb.PredictEditRequest()
        sent.CopyFrom(request)
        sent.speculation = mode  # type: ignore[assignment]
        sent.request_id = rid
        if args.max_tokens:
            sent.sampling.max_tokens = args.max_tokens
        return await runner.predict_edit(sent)

    for name, mode in modes.items():  # measure plain and verify rounds' costs before timing
        await ask(warmup.request, mode, f"warmup-{name}")
    totals = {name: Totals() for name in modes}
    differing: list[str] = []
    computed = prompt = changed = 0
    print(f"{'case':<22} {'tokens':>6} {'tokens/s ' + '/'.join(modes):>26} {'passes':>14} {'parsed':>6}")
    for index, case in enumerate(cases):
        replies = {name: await ask(case.request, mode, f"{index}-{name}") for name, mode in modes.items()}
        for name, reply in replies.items():
            totals[name].add(reply.figures)
            if not _same_reply(replies["off"], reply):
                differing.append(f"{case.request.session_id} ({name})")
        rates = "/".join(f"{_decode_rate(r.figures):.1f}" for r in replies.values())
        passes = "/".join(str(r.figures.target_forward_passes) for r in replies.values())
        off = replies["off"]
        print(
            f"{case.request.session_id:<22} {off.figures.generated_tokens:>6} {rates:>26} {passes:>14} "
            f"{off.parsed!s:>6}"
        )
        typed_request = _keystroke(case.request)
        typed = await ask(typed_request, modes["ngram"], f"{index}-typed")
        computed += typed.figures.computed_tokens
        prompt += typed.figures.prompt_tokens
        changed += _changed_tail(served, case.request, typed_request)
    plain = totals["off"]
    print(
        f"\nregion rewrites: {len(cases)} regions of {args.lines} lines, {plain.generated} tokens generated "
        f"in each mode"
    )
    for name, total in totals.items():
        print(
            f"  {name:<6} {total.tokens_per_s:6.1f} tokens/s, {total.forward_passes} target forward passes "
            f"({total.forward_passes / max(1, total.generated):.2f} per token), proposed {total.proposed}, "
            f"accepted {total.accepted}"
        )
    for name in ("ngram", "auto"):
        total = totals[name]
        print(
            f"  {name} (prompt lookup + draft limit) over plain: "
            f"{total.tokens_per_s / max(1e-9, plain.tokens_per_s):.2f}x tokens/s; "
            f"{100 * total.accepted / max(1, total.generated):.0f} % of the reply came from accepted "
            "proposals"
        )
    print(f"  identical to off: {len(modes) - 1} modes x {len(cases)} regions, {len(differing)} differing")
    print(
        f"after a keystroke: {computed} of {prompt} prompt tokens computed "
        f"({100 * computed / max(1, prompt):.1f} %), the rest reused from the cache; the prompts' "
        f"token ids differ from the keystroke on: {changed} tokens (KV blocks hold "
        f"{served.info.kv_block_size} tokens)"
    )
    assert not differing, f"prompt lookup changed the output of {differing}"
    return 0


def main(argv: list[str]) -> int:
    from inference.default_model import default_model

    parser = argparse.ArgumentParser(
        prog="codedraft bench next-edit-decode", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--model", type=Path, default=default_model().target, help="target model (folder or GGUF)"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (0: torch's choice)")
    parser.add_argument("--regions", type=int, default=10, help="region rewrites to time")
    parser.add_argument("--lines", type=int, default=15, help="lines per region")
    parser.add_argument(
        "--max-tokens", type=int, default=0, help="max tokens per reply (0: the daemon sizes it)"
    )
    parser.add_argument(
        "--weights",
        default="auto",
        help="how the CPU holds the weights: auto (as the daemon), float32, float16, q4_1, q4_1_q8",
    )
    parser.add_argument(
        "--kv-cache-mb", type=float, default=None, help="KV pool size (default: sized by the model)"
    )
    args = parser.parse_args(argv)
    import torch

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    print(f"torch threads {torch.get_num_threads()}")
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
