"""The phase schedule: the commands it runs, and a tiny run of all phases chained by --resume-from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.training_run import HELD_OUT_PERCENT
from training.schedule import PHASES, main, phase_argv


def test_phases_continue_each_other_with_their_budgets(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--dry-run", "--work-dir", "w", "--time-scale", "0.5"]) == 0
    commands = capsys.readouterr().out.strip().splitlines()
    assert len(commands) == len(PHASES) == 6
    assert "--resume-from" not in commands[0]
    for number in range(1, len(PHASES)):
        assert f"--resume-from w/phase{number}" in commands[number]
    assert "--time-budget-min 30 " in commands[0] + " "
    assert "--recipe long-context" in commands[3] and "--stop-after-min 15" in commands[3]
    assert "--recipe fim-focus" in commands[4] and "--lr-scale 0.35" in commands[4]
    assert "--recipe copy-focus" in commands[-1] and "--time-budget-min 10 " in commands[-1] + " "
    assert phase_argv(PHASES[1], Path("o"), Path("s"), Path("p"), 1.0)[-4:] == [
        "--lr-scale",
        "0.5",
        "--warmup-steps",
        "20",
    ]


def test_tiny_schedule_chains_every_phase(tmp_path: Path, tiny_corpus: Path) -> None:
    out = tmp_path / "models"
    argv = ["--recipe", "tiny", "--steps", "2", "--out-dir", str(out), "--work-dir", str(tmp_path / "w")]
    argv += ["--corpus-root", str(tiny_corpus), "--held-out-percent", str(HELD_OUT_PERCENT), "--threads", "1"]
    assert main(argv) == 0
    run = json.loads((out / "training_run.json").read_text())
    depth = 0
    while run:
        depth += 1
        assert run["steps"] == 2
        run = run["resumed_from"]
    assert depth == len(PHASES)
    assert (out / "codedraft-base" / "model.safetensors").is_file()
    assert (out / "codedraft-draft" / "config.json").is_file()
