"""`make gpu-check` without a GPU says so and succeeds; with one, its steps are the gpu tests and the
engine and daemon benchmarks on the GPU."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from bench import gpu_check


def test_without_cuda_it_says_so_and_exits_0(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    ran: list[object] = []
    monkeypatch.setattr(gpu_check, "run_step", lambda step: ran.append(step))
    assert gpu_check.main([]) == 0
    assert capsys.readouterr().out.startswith("gpu-check: no CUDA device (torch ")
    assert ran == []


def test_the_steps_run_the_gpu_tests_and_both_benchmarks_on_cuda() -> None:
    steps = gpu_check.steps(Path("model.gguf"), quick=True)
    tests, *benchmarks = [step.argv for step in steps]
    assert tests[tests.index("-m", 2) + 1] == "gpu"
    assert [argv[argv.index("bench") + 1] for argv in benchmarks] == ["engine", "engine", "daemon"]
    assert all(argv[argv.index("--device") + 1] == "cuda" for argv in benchmarks)


def test_a_failed_step_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu_check, "cuda_summary", lambda: "a GPU")
    outcomes = iter([("passed", 1.0), ("FAILED (exit status 1)", 2.0), ("passed", 1.0), ("passed", 1.0)])
    monkeypatch.setattr(gpu_check, "run_step", lambda step: next(outcomes))
    assert gpu_check.main(["--quick"]) == 1
