"""llama.cpp (through `llama-cpp-python`) as the speed anchor of `codedraft bench versus-llamacpp`.

The package compiles llama.cpp on install (about 15 minutes on two cores), so it is never a
dependency of the project nor of `make test`: :func:`ensure_llama_cpp` installs the pinned version
into the running environment the first time the benchmark needs it (pip caches the built wheel).
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

LLAMA_CPP_REQUIREMENT = "llama-cpp-python==0.3.36"


class LlamaCppUnavailable(Exception):
    """llama-cpp-python is missing and could not be installed; the message says why."""


def ensure_llama_cpp(install: bool = True) -> Any:
    """The `llama_cpp` module, installing the pinned package on first use when `install` is set."""
    try:
        return importlib.import_module("llama_cpp")
    except ImportError:
        if not install:
            raise LlamaCppUnavailable(
                f"llama-cpp-python is not installed (pip install {LLAMA_CPP_REQUIREMENT})"
            ) from None
    print(f"installing {LLAMA_CPP_REQUIREMENT} (it compiles llama.cpp: ~15 min the first time)", flush=True)
    command = [sys.executable, "-m", "pip", "install", "-q", LLAMA_CPP_REQUIREMENT]
    result = subprocess.run(command, check=False)
    if result.returncode != 0:
        raise LlamaCppUnavailable(f"`{' '.join(command)}` failed with exit status {result.returncode}")
    importlib.invalidate_caches()
    return importlib.import_module("llama_cpp")


@dataclass
class Timed:
    """One greedy generation: its tokens, time to the first token and total time (seconds), and the
    same two in CPU seconds of this process (both engines compute in it), which other jobs on a
    shared machine disturb less than the wall clock."""

    tokens: list[int]
    first_token_s: float
    total_s: float
    evaluated: int
    first_token_cpu_s: float = 0.0
    total_cpu_s: float = 0.0

    @property
    def decode_tokens_per_s(self) -> float:
        """Tokens after the first, per second of decoding."""
        return _rate(len(self.tokens) - 1, self.total_s - self.first_token_s)

    @property
    def decode_tokens_per_cpu_s(self) -> float:
        """Tokens after the first, per CPU second of decoding."""
        return _rate(len(self.tokens) - 1, self.total_cpu_s - self.first_token_cpu_s)


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 and count > 0 else 0.0


class LlamaCppRunner:
    """Greedy generation on one GGUF file, reusing llama.cpp's KV for a shared prompt prefix as its
    server does (one sequence: the longest common prefix with the last call is kept)."""

    def __init__(self, gguf: str, n_ctx: int, threads: int) -> None:
        llama_cpp = ensure_llama_cpp()
        self.llm = llama_cpp.Llama(
            model_path=gguf,
            n_ctx=n_ctx,
            n_threads=threads,
            n_threads_batch=threads,
            n_batch=512,
            verbose=False,
        )

    def tokenize(self, text: str) -> list[int]:
        """llama.cpp's token ids for `text` (no BOS added)."""
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def generate(self, prompt_ids: Sequence[int], max_tokens: int, cold: bool = False) -> Timed:
        """Greedy tokens after `prompt_ids`, ignoring end of text, timed."""
        if cold:
            self.llm.reset()
        cached = self.llm.input_ids[: min(self.llm.n_tokens, len(prompt_ids))]  # llama.cpp's KV tokens
        differ = np.flatnonzero(cached != np.asarray(prompt_ids[: len(cached)]))
        reused = int(differ[0]) if differ.size else len(cached)
        evaluated = len(prompt_ids) - min(reused, len(prompt_ids) - 1)
        started, cpu_started = time.perf_counter(), time.process_time()
        first = first_cpu = 0.0
        tokens: list[int] = []
        for token in self.llm.generate(list(prompt_ids), top_k=1, top_p=1.0, temp=0.0, reset=True):
            if not tokens:
                first, first_cpu = time.perf_counter() - started, time.process_time() - cpu_started
            tokens.append(int(token))
            if len(tokens) >= max_tokens:
                break
        total, total_cpu = time.perf_counter() - started, time.process_time() - cpu_started
        return Timed(tokens, first, total, evaluated, first_cpu, total_cpu)
