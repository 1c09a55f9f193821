"""Train the default pair: ``python -m training.train_default [--out-dir models] ...``.

Rebuilds ``codedraft-base`` (target) and ``codedraft-draft`` from the local Python standard library,
seeded; exports both every few minutes so an interrupted run still leaves usable models.
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer
from transformers import LlamaForCausalLM

from bench.corpus import SourceFile, collect_files, split_files, stdlib_root
from training.example_text import EOS
from training.examples import ExampleStream, plain_rows
from training.export import build_model, llama_config, parameter_count, save_fp16
from training.recipe import RECIPES, TrainRecipe
from training.tokenizer_build import train_tokenizer, write_tokenizer_files
from training.trainer import TrainProgress, evaluate_loss, train_pair

_M_TRIM_THRESHOLD = -1  # mallopt parameters (malloc.h)
_M_MMAP_MAX = -4

TARGET_DIR = "codedraft-base"
DRAFT_DIR = "codedraft-draft"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--recipe", choices=sorted(RECIPES), default="long-context", help="preset")
    parser.add_argument("--out-dir", type=Path, default=Path("models"), help="where the two model dirs go")
    parser.add_argument("--work-dir", type=Path, default=Path("runs/train"), help="tokenizer scratch dir")
    parser.add_argument("--corpus-root", type=Path, default=None, help="source tree (default: stdlib)")
    parser.add_argument("--max-files", type=int, default=None, help="use only the first N files")
    parser.add_argument("--steps", type=int, default=None, help="override the recipe's step count")
    parser.add_argument("--time-budget-min", type=float, default=None, help="anneal and stop by then")
    parser.add_argument(
        "--stop-after-min", type=float, default=None, help="stop then, on the --time-budget-min schedule"
    )
    parser.add_argument("--checkpoint-every-min", type=float, default=10.0, help="periodic export")
    parser.add_argument("--held-out-percent", type=int, default=None, help="override the recipe's split")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument(
        "--resume-from",
        type=Path,
        default=None,
        help="continue the pair (and tokenizer) of an earlier run's out dir",
    )
    parser.add_argument("--lr-scale", type=float, default=1.0, help="scale both peak learning rates")
    parser.add_argument("--warmup-steps", type=int, default=None, help="override the recipe's warm-up")
    return parser


def _keep_freed_memory() -> None:
    """Stop glibc from returning the step's large tensors to the kernel after each step.

    Each step frees and reallocates hundreds of MB of logits and activations; served by mmap, every
    page is faulted in and zeroed again (a third of the step time went to the kernel). Keeping them
    on the heap makes later steps reuse warm pages. Other C libraries simply skip this.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_MAX, 0)
        libc.mallopt(_M_TRIM_THRESHOLD, 2**30)
    except (OSError, AttributeError):
        pass


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _recipe(args: argparse.Namespace) -> TrainRecipe:
    """The preset named by ``--recipe`` with the command line's overrides applied."""
    recipe = RECIPES[args.recipe]
    if args.steps is not None:
        recipe = dataclasses.replace(
            recipe, steps=args.steps, warmup_steps=min(recipe.warmup_steps, args.steps)
        )
    if args.held_out_percent is not None:
        recipe = dataclasses.replace(recipe, held_out_percent=args.held_out_percent)
    if args.warmup_steps is not None:
        recipe = dataclasses.replace(recipe, warmup_steps=args.warmup_steps)
    if args.lr_scale != 1.0:
        recipe = dataclasses.replace(
            recipe, lr=recipe.lr * args.lr_scale, draft_lr=recipe.draft_lr * args.lr_scale
        )
    return recipe


def _resume(
    source: Path, tokenizer_dir: Path, seq_len: int
) -> tuple[Tokenizer, LlamaForCausalLM, LlamaForCausalLM, dict[str, Any]]:
    """The tokenizer, both models (float32) and the run record of an earlier run's out dir.

    Continuing keeps the tokenizer: the weights' token ids depend on it. The context becomes the
    recipe's ``seq_len`` (RoPE has no learned positions, so a longer one is trained, not rebuilt).
    """
    tokenizer = Tokenizer.from_file(str(source / TARGET_DIR / "tokenizer.json"))
    write_tokenizer_files(tokenizer, tokenizer_dir, seq_len)
    target = LlamaForCausalLM.from_pretrained(source / TARGET_DIR, dtype=torch.float32)
    draft = LlamaForCausalLM.from_pretrained(source / DRAFT_DIR, dtype=torch.float32)
    for model in (target, draft):
        model.config.max_position_embeddings = seq_len
    return tokenizer, target, draft, json.loads((source / "training_run.json").read_text())


def _fresh(
    recipe: TrainRecipe, train_files: list[SourceFile], tokenizer_dir: Path
) -> tuple[Tokenizer, LlamaForCausalLM, LlamaForCausalLM]:
    """A tokenizer trained on the training split and two seeded, freshly initialised models."""
    tokenizer = train_tokenizer((f.text for f in train_files), recipe.vocab_size)
    write_tokenizer_files(tokenizer, tokenizer_dir, recipe.seq_len)
    eos_id = tokenizer.token_to_id(EOS)
    assert eos_id is not None, "the trainer adds the special tokens"
    vocab = tokenizer.get_vocab_size()
    target = build_model(
        llama_config(recipe.target, vocab, recipe.seq_len, recipe.rope_theta, eos_id), recipe.seed
    )
    draft = build_model(
        llama_config(recipe.draft, vocab, recipe.seq_len, recipe.rope_theta, eos_id), recipe.seed + 1
    )
    return tokenizer, target, draft


def main(argv: list[str] | None = None) -> int:
    """Run the recipe; returns a process exit code."""
    args = _parser().parse_args(argv)
    recipe = _recipe(args)
    torch.set_num_threads(args.threads)
    _keep_freed_memory()
    torch.manual_seed(recipe.seed)

    def log(line: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {line}", flush=True)

    root = args.corpus_root or stdlib_root()
    files = collect_files(root, args.max_files)
    train_files, held_files = split_files(files, recipe.held_out_percent)
    if not train_files or not held_files:
        print(
            f"error: {root} gives {len(train_files)} training and {len(held_files)} held-out files",
            file=sys.stderr,
        )
        return 2
    log(f"corpus {root}: {len(train_files)} train files, {len(held_files)} held-out files")

    tokenizer_dir = args.work_dir / "tokenizer"
    previous: dict[str, Any] = {}
    if args.resume_from is not None:
        tokenizer, target, draft, previous = _resume(args.resume_from, tokenizer_dir, recipe.seq_len)
        # A continuation draws new examples rather than replaying the first run's.
        recipe = dataclasses.replace(recipe, seed=recipe.seed + int(previous.get("steps", 0)))
    else:
        tokenizer, target, draft = _fresh(recipe, train_files, tokenizer_dir)
    vocab = tokenizer.get_vocab_size()
    log(f"target {parameter_count(target):,} params, draft {parameter_count(draft):,} params, vocab {vocab}")

    stream = ExampleStream(train_files, tokenizer, recipe.seq_len, recipe.seed, recipe.mix)
    held_out = plain_rows(held_files, tokenizer, recipe.seq_len, max_rows=24)
    out_dir: Path = args.out_dir
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def export(progress: TrainProgress, final: bool = False) -> None:
        save_fp16(target, out_dir / TARGET_DIR, tokenizer_dir)
        save_fp16(draft, out_dir / DRAFT_DIR, tokenizer_dir)
        summary = {
            "final": final,
            "started_utc": started,
            "steps": progress.steps,
            "tokens_seen": progress.tokens,
            "train_seconds": round(progress.seconds, 1),
            "last_target_loss": round(progress.target_loss, 4),
            "last_draft_ce": round(progress.draft_loss, 4),
            "target_params": parameter_count(target),
            "draft_params": parameter_count(draft),
            "hardware": f"{_cpu_name()}, {torch.get_num_threads()} torch threads, float32",
            "torch": torch.__version__,
            "python": platform.python_version(),
            "corpus_root": str(root),
            "train_files": len(train_files),
            "held_out_files": [f.path for f in held_files],
            "recipe": recipe.to_json(),
            "resumed_from": previous or None,
            "command": " ".join(["python -m training.train_default", *(argv or sys.argv[1:])]),
        }
        if final and held_out:
            summary["held_out_loss_target"] = round(evaluate_loss(target, held_out), 4)
            summary["held_out_loss_draft"] = round(evaluate_loss(draft, held_out), 4)
        (out_dir / "training_run.json").write_text(json.dumps(summary, indent=2) + "\n")
        log(f"exported to {out_dir} at step {progress.steps}")

    budget = args.time_budget_min * 60 if args.time_budget_min else None
    progress = train_pair(
        target,
        draft,
        stream,
        recipe,
        held_out,
        log,
        export,
        time_budget_s=budget,
        stop_after_s=args.stop_after_min * 60 if args.stop_after_min is not None else None,
        checkpoint_every_s=args.checkpoint_every_min * 60,
    )
    export(progress, final=True)
    log(json.dumps({"done": True, "steps": progress.steps, "tokens": progress.tokens, "pid": os.getpid()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
