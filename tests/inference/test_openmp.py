"""The OpenMP spin reaches torch: set in the daemon's environment before torch loads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from inference.daemon_launcher import DaemonProcess
from inference.openmp import SPIN_COUNT, openmp_environment


def test_the_spin_is_added_unless_the_user_chose_one() -> None:
    assert openmp_environment({"HOME": "/h"}) == {"HOME": "/h", "GOMP_SPINCOUNT": SPIN_COUNT}
    assert openmp_environment({"GOMP_SPINCOUNT": "5"}) == {"GOMP_SPINCOUNT": "5"}
    assert openmp_environment({"OMP_WAIT_POLICY": "PASSIVE"}) == {"OMP_WAIT_POLICY": "PASSIVE"}


def test_the_daemon_command_loads_torch_only_after_setting_the_spin() -> None:
    """In a fresh interpreter: the command line's modules import no torch, so `codedraft daemon` sets
    GOMP_SPINCOUNT (in `run`) before libgomp reads it."""
    script = (
        "import os, sys\n"
        "os.environ.pop('GOMP_SPINCOUNT', None); os.environ.pop('OMP_WAIT_POLICY', None)\n"
        "import codedraft.cli, codedraft.daemon_command, inference.daemon_launcher\n"
        "print('torch' in sys.modules)\n"
        "from inference.openmp import set_openmp_spin\n"
        "set_openmp_spin()\n"
        "print(os.environ['GOMP_SPINCOUNT'])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.split() == ["False", SPIN_COUNT]


def test_a_started_daemon_process_has_the_spin_from_its_first_instruction(tmp_path: Path) -> None:
    log = tmp_path / "daemon.log"
    argv = [sys.executable, "-c", "import os; print(os.environ.get('GOMP_SPINCOUNT'))"]
    started = DaemonProcess(argv, log)
    assert started.process.wait(timeout=60) == 0
    assert log.read_text().split() == [SPIN_COUNT]
