"""Other work on the machine, for the benchmarks' busy levels: processes that each spin one core.

A burner is a plain Python process in a busy loop (what a compiler or a test run looks like to the
scheduler). :class:`CpuBurners` stops them when its block ends, however it ends; a burner also ends by
itself once its parent is gone (it checks every few milliseconds), so a benchmark killed with SIGKILL
leaves no spinning process behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
from types import TracebackType

# The parent's pid comes as an argument: read with getppid() at start-up, it would be the new parent's
# when the benchmark died while this interpreter was still starting.
BURN_SOURCE = (
    "import os, sys\n"
    "parent = int(sys.argv[1])\n"
    "while os.getppid() == parent:\n"
    "    for _ in range(100_000):\n"
    "        pass\n"
)


def parse_busy_levels(text: str) -> list[int]:
    """``"0,1,2"`` -> ``[0, 1, 2]``: how many cores other processes keep busy at each level."""
    try:
        levels = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--busy takes comma-separated counts of busy cores, got {text!r}") from None
    if not levels or any(level < 0 for level in levels):
        raise ValueError(f"--busy takes comma-separated counts >= 0, got {text!r}")
    return levels


class CpuBurners:
    """``count`` processes spinning one core each while the ``with`` block runs.

    Invariant: after ``stop()`` (and after leaving the block) every burner started here has exited
    and been reaped.
    """

    def __init__(self, count: int) -> None:
        self.count = count
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self) -> CpuBurners:
        """Starts the burners (none for a count of 0); if one cannot start, stops those that did."""
        try:
            for _ in range(self.count):
                self._start_one()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_one(self) -> None:
        self.processes.append(
            subprocess.Popen(
                [sys.executable, "-c", BURN_SOURCE, str(os.getpid())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"},
            )
        )

    def stop(self) -> None:
        """Kills every burner and waits for it."""
        for process in self.processes:
            if process.poll() is None:
                process.kill()
        for process in self.processes:
            process.wait(timeout=30)
        self.processes.clear()

    def __enter__(self) -> CpuBurners:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
