"""How often codedraft's weights forms pick llama.cpp's greedy token on the same GGUF file.

    python -m bench.greedy_agreement --gguf FILE [--weights native_q8,native] [--tokens 160]

llama.cpp (`llama-cpp-python`) decodes `--tokens` greedy tokens after the first lines of a stdlib file
(textwrap.py); then each codedraft form is fed llama.cpp's sequence a token at a time (its prefix
cache reusing all but the new token) and its greedy choice after every prefix is compared with
llama.cpp's next token (the replay share), and each form also decodes freely (tokens equal to
llama.cpp's up to the first difference). The first form is also compared with the others the same
way, so `native` (float32 activations on the file's exact weights) shows what 8-bit activations
change. Near ties part any two engines: the shares, not equality, are the measure.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

import torch

from bench.codedraft_runner import CodedraftRunner
from bench.llamacpp_runner import LlamaCppRunner
from inference.loading import load_model

PROMPT_LINES = 40


def replay_share(runner: CodedraftRunner, prompt: list[int], sequence: list[int]) -> int:
    """Steps at which `runner`'s greedy token after prompt + sequence[:i] is sequence[i]."""
    steps = range(len(sequence))
    return sum(runner.generate(prompt + sequence[:i], 1).tokens[:1] == [sequence[i]] for i in steps)


def equal_prefix(a: list[int], b: list[int]) -> int:
    """Tokens equal up to the first difference."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def main(argv: list[str] | None = None) -> int:
    """Print the shares (see the module's docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.greedy_agreement", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--gguf", type=Path, required=True)
    parser.add_argument("--weights", default="native_q8,native", help="comma-separated codedraft forms")
    parser.add_argument("--tokens", type=int, default=160)
    args = parser.parse_args(argv)
    forms = [f.strip() for f in args.weights.split(",") if f.strip()]
    runners = {form: CodedraftRunner(load_model(args.gguf, "cpu", weights=form)) for form in forms}
    loaded = load_model(args.gguf, "cpu", weights=forms[0])
    source = Path(textwrap.__file__).read_text(encoding="utf-8")
    prompt = loaded.tokenizer.encode("\n".join(source.splitlines()[:PROMPT_LINES]) + "\n")
    context = len(prompt) + args.tokens + 16
    theirs = LlamaCppRunner(str(args.gguf), n_ctx=context, threads=torch.get_num_threads())
    reference = {"llama.cpp": theirs.generate(prompt, args.tokens).tokens}
    free = {form: runner.generate(prompt, args.tokens).tokens for form, runner in runners.items()}
    reference[forms[0]] = free[forms[0]]
    print(f"{args.gguf.name}: {len(prompt)}-token prompt (textwrap.py), {args.tokens} greedy tokens")
    for name, sequence in reference.items():
        for form, runner in runners.items():
            if form == name:
                continue
            share = replay_share(runner, prompt, sequence)
            print(
                f"  {form} on {name}'s sequence: argmax equal at {share}/{len(sequence)} steps; "
                f"free-running equal for the first {equal_prefix(free[form], sequence)} tokens"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
