"""llama.cpp in a process of its own, for benchmarks that compare it with codedraft's engine.

Both engines spin OpenMP workers: PyTorch's bundled libgomp and the system's under ggml. In one
process the two runtimes' spinning workers slow whichever engine runs right after the other (on two
cores codedraft decoded at 30-32 tokens/s right after a llama.cpp turn, 34-41 alone), so the
comparison would depend on the order of turns. :class:`LlamaCppProcess` runs
:class:`~bench.llamacpp_runner.LlamaCppRunner` in a child Python process that imports neither torch
nor codedraft, and answers the same calls over a pipe; timings are taken inside the child (its own
wall and CPU clocks), so the pipe's cost is not counted.

The protocol is pickled (call, arguments) tuples one way and ("ok", value) / ("error", message) the
other, on the child's original standard output; the child points its standard output at standard
error first, so nothing llama.cpp prints can corrupt a reply.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections.abc import Sequence
from typing import IO, Any

from bench.llamacpp_runner import LlamaCppRunner, LlamaCppUnavailable, Timed, ensure_llama_cpp


class LlamaCppProcess:
    """A :class:`LlamaCppRunner` in a child process: `tokenize` and `generate` as the runner's."""

    def __init__(self, gguf: str, n_ctx: int, threads: int) -> None:
        ensure_llama_cpp_installed()
        self.gguf = gguf
        self._child = subprocess.Popen(
            [sys.executable, "-m", "bench.llamacpp_process"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        try:
            self._call("load", gguf, n_ctx, threads)
        except LlamaCppUnavailable:
            self.close()  # a file llama.cpp refuses: the child ends with the error
            raise

    def tokenize(self, text: str) -> list[int]:
        """llama.cpp's token ids for `text` (no BOS added)."""
        tokens: list[int] = self._call("tokenize", text)
        return tokens

    def generate(self, prompt_ids: Sequence[int], max_tokens: int, cold: bool = False) -> Timed:
        """Greedy tokens after `prompt_ids`, timed in the child."""
        timed: Timed = self._call("generate", list(prompt_ids), max_tokens, cold)
        return timed

    def close(self) -> None:
        """Stop the child (it also stops when this process's end of the pipe closes)."""
        if self._child.poll() is None:
            assert self._child.stdin is not None
            self._child.stdin.close()
            self._child.wait(timeout=30)

    def _call(self, name: str, *args: Any) -> Any:
        assert self._child.stdin is not None and self._child.stdout is not None
        try:
            pickle.dump((name, args), self._child.stdin)
            self._child.stdin.flush()
            status, value = pickle.load(self._child.stdout)
        except (BrokenPipeError, EOFError):
            code = self._child.wait(timeout=30)
            raise LlamaCppUnavailable(f"llama.cpp's process ended (exit status {code})") from None
        if status == "error":
            raise LlamaCppUnavailable(value)
        return value


def ensure_llama_cpp_installed() -> None:
    """Install the pinned llama-cpp-python here when missing, without loading it into this process."""
    import importlib.util

    if importlib.util.find_spec("llama_cpp") is None:
        ensure_llama_cpp()


def serve(requests: IO[bytes], replies: IO[bytes]) -> None:
    """The child's loop: answer each pickled call until the parent closes the pipe."""
    runner: LlamaCppRunner | None = None
    while True:
        try:
            name, args = pickle.load(requests)
        except EOFError:
            return
        try:
            if name == "load":
                runner = LlamaCppRunner(*args)
                reply: tuple[str, Any] = ("ok", None)
            elif name not in ("tokenize", "generate"):
                reply = ("error", f"llama.cpp: unknown call {name!r}")
            elif runner is None:
                reply = ("error", "llama.cpp: no model loaded")
            else:
                reply = ("ok", runner.tokenize(*args) if name == "tokenize" else runner.generate(*args))
        except Exception as error:  # every failure goes back to the parent as a message
            reply = ("error", f"llama.cpp: {type(error).__name__}: {error}")
        pickle.dump(reply, replies)
        replies.flush()


if __name__ == "__main__":
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    serve(sys.stdin.buffer, protocol)
