"""Which files the model benchmarks score on: the training run's held-out share of a corpus, and the
model folders they are given."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from codedraft.errors import CommandError


def held_out_percent(args: argparse.Namespace) -> int:
    """The share of the corpus the training run held out (``--held-out-percent``, else the run's own
    record beside ``--target``, else 3)."""
    if args.held_out_percent is not None:
        return int(args.held_out_percent)
    run = args.target.parent / "training_run.json"
    if run.is_file():
        return int(json.loads(run.read_text())["recipe"]["held_out_percent"])
    return 3


def check_model_dir(path: Path, flag: str) -> None:
    """A CommandError naming ``flag`` unless ``path`` is a Hugging Face model folder."""
    if not (path / "config.json").is_file() or not (path / "tokenizer.json").is_file():
        raise CommandError(f"{flag} {path}: not a model directory (config.json and tokenizer.json needed)")
