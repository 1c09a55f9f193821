"""How long an idle OpenMP worker of torch spins before it sleeps, set before torch loads.

A decode step is a few hundred parallel regions a few microseconds apart. A worker that sleeps
between them (``OMP_WAIT_POLICY=PASSIVE``) is woken hundreds of times a token, which more than halves
the daemon's decoding speed; a long spin (libgomp's default, 300,000 rounds) wastes the CPU when other
processes hold every core. A spin of 30,000 rounds keeps most of the speed and sleeps soon after a
step (figures: docs/benchmarks.md, "daemon, OpenMP spin"). A value the user set, or an
``OMP_WAIT_POLICY``, wins.

Only one thread should run torch's parallel work: libgomp gives every thread that starts parallel
regions its own team, and once the teams' threads outnumber the cores it stops spinning altogether
(the daemon loads its model in a thread that ends, and runs the engine in one thread).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

SPIN_COUNT = "30000"


def openmp_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with ``GOMP_SPINCOUNT`` added, unless the user chose a spin or a wait policy there:
    the environment to start a daemon with (libgomp reads it once, when torch loads)."""
    added = {} if "OMP_WAIT_POLICY" in environ else {"GOMP_SPINCOUNT": SPIN_COUNT}
    return {**added, **environ}


def set_openmp_spin() -> None:
    """Sets ``GOMP_SPINCOUNT`` in this process for torch's OpenMP runtime, unless the user chose a spin
    or a wait policy; effective only before torch loads."""
    for name, value in openmp_environment(os.environ).items():
        os.environ.setdefault(name, value)
