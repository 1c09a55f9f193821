"""The whole training of the shipped pair, phase after phase: ``python -m training.schedule``.

Each phase is one ``train_default`` run that continues the previous phase's out dir. The phases are the
ones the shipped models went through (models/MODEL_CARD.md): three at 512 tokens of context, one at
2,048 with whole-example rows and rename examples (stopped after 30 of its 75 minutes), one that
weights the loss on FIM middles, and a short one with many rename examples, for copying. Budgets are
wall-clock minutes; ``--time-scale`` shrinks or stretches all of them (a faster machine sees more
tokens in the same time).
"""

from __future__ import annotations

import argparse
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from training.train_default import DRAFT_DIR, TARGET_DIR
from training.train_default import main as train_main


@dataclass(frozen=True)
class Phase:
    """One ``train_default`` run: its recipe, time budget, learning-rate scale and warm-up."""

    recipe: str
    minutes: float
    lr_scale: float = 1.0
    warmup_steps: int | None = None
    stop_after: float | None = None  # minutes: the phase was stopped part-way through its schedule


PHASES = (
    Phase("short-context", 60.0),
    Phase("short-context", 24.0, lr_scale=0.5, warmup_steps=20),
    Phase("short-context", 32.0, lr_scale=0.35, warmup_steps=20),
    Phase("long-context", 75.0, lr_scale=0.5, stop_after=30.0),
    Phase("fim-focus", 60.0, lr_scale=0.35),
    Phase("copy-focus", 20.0, lr_scale=0.35),
)


def phase_argv(phase: Phase, out_dir: Path, work_dir: Path, previous: Path | None, scale: float) -> list[str]:
    """The ``train_default`` command line of one phase."""
    argv = ["--recipe", phase.recipe, "--out-dir", str(out_dir), "--work-dir", str(work_dir)]
    argv += ["--time-budget-min", f"{phase.minutes * scale:g}"]
    if previous is not None:
        argv += ["--resume-from", str(previous)]
    if phase.lr_scale != 1.0:
        argv += ["--lr-scale", f"{phase.lr_scale:g}"]
    if phase.warmup_steps is not None:
        argv += ["--warmup-steps", str(phase.warmup_steps)]
    if phase.stop_after is not None:
        argv += ["--stop-after-min", f"{phase.stop_after * scale:g}"]
    return argv


def main(argv: list[str] | None = None) -> int:
    """Run every phase (or print the commands with ``--dry-run``); returns a process exit code.

    Options it does not know are passed on to every phase's ``train_default``.
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out-dir", type=Path, default=Path("models"), help="where the final pair goes")
    parser.add_argument("--work-dir", type=Path, default=Path("runs/schedule"), help="phase outputs")
    parser.add_argument("--time-scale", type=float, default=1.0, help="multiply every phase's budget")
    parser.add_argument("--recipe", default=None, help="run every phase with this preset (tests: tiny)")
    parser.add_argument("--steps", type=int, default=None, help="cap every phase's steps (tests)")
    parser.add_argument("--dry-run", action="store_true", help="print the commands, train nothing")
    args, passed_on = parser.parse_known_args(argv)  # e.g. --corpus-root, --threads: for every phase
    previous: Path | None = None
    for number, phase in enumerate(PHASES, start=1):
        if args.recipe is not None:
            phase = replace(phase, recipe=args.recipe)
        out = args.work_dir / f"phase{number}"
        command = phase_argv(phase, out, args.work_dir / f"scratch{number}", previous, args.time_scale)
        if args.steps is not None:
            command += ["--steps", str(args.steps)]
        command += passed_on
        print("python -m training.train_default " + " ".join(command), flush=True)
        if not args.dry_run and (code := train_main(command)) != 0:
            return code
        previous = out
    if not args.dry_run and previous is not None:
        args.out_dir.mkdir(parents=True, exist_ok=True)
        for name in (TARGET_DIR, DRAFT_DIR):
            shutil.rmtree(args.out_dir / name, ignore_errors=True)
            shutil.copytree(previous / name, args.out_dir / name)
        shutil.copyfile(previous / "training_run.json", args.out_dir / "training_run.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
