"""Time to ready and resident memory of one engine on one GGUF file, in a process of its own (so the
figures are that engine's alone): load, then one short greedy generation.

    python -m bench.ready_memory --gguf FILE --engine codedraft|codedraft-daemon|llamacpp [--context 4096]

Prints seconds to ready, then VmRSS (resident now) and VmHWM (the process's peak) in MB after
loading, after generating, and for codedraft once its repacking thread (native_q8) has ended.
codedraft serves the file as the daemon does (`--weights auto`) with a KV pool of `--context`
tokens (`codedraft-daemon`: loaded as `codedraft daemon` loads it, which also builds token healing's
vocabulary index); llama.cpp (llama-cpp-python) with an `n_ctx` of `--context`.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inference.engine.engine import LLMEngine
    from inference.tokenizer import Tokenizer

PROMPT = "def fibonacci(n):\n    if n < 2:\n        return n\n"


def memory_mb() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process in MB (Linux's /proc/self/status; zeros elsewhere)."""
    values = {"VmRSS:": 0.0, "VmHWM:": 0.0}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            key, *rest = line.split()
            if key in values:
                values[key] = float(rest[0]) / 1024
    except OSError:
        pass
    return values["VmRSS:"], values["VmHWM:"]


# (seconds to ready, one short generation, waiting for the repacking thread)
Measured = tuple[float, Callable[[], object], Callable[[], object]]


def _generation(engine: LLMEngine, tokenizer: Tokenizer) -> Callable[[], None]:
    """One short greedy generation, stepping `engine` here."""
    from inference.config import SamplingParams
    from inference.engine.sequence import Request

    def generate() -> None:
        sampling = SamplingParams(max_tokens=16, ignore_eos=True)
        engine.add_request(Request("r", prompt_token_ids=tokenizer.encode(PROMPT), sampling=sampling))
        while engine.has_work():
            engine.step()

    return generate


def _repacking_ended(model: object) -> Callable[[], None]:
    """Waiting for the model's repacking thread (native_q8), if it has one."""

    def wait() -> None:
        repacking = getattr(model, "repacking", None)
        if repacking is not None:
            repacking.join()

    return wait


def _codedraft(gguf: Path, context: int) -> Measured:
    from inference.config import EngineConfig
    from inference.engine.engine import LLMEngine
    from inference.loading import load_model

    started = time.perf_counter()
    loaded = load_model(gguf, "cpu", weights="auto")
    config = EngineConfig(num_kv_blocks=context // EngineConfig().block_size)
    engine = LLMEngine.from_loaded(loaded, config, None)
    ready = time.perf_counter() - started
    print(f"codedraft weights {loaded.weights}")
    return ready, _generation(engine, loaded.tokenizer), _repacking_ended(loaded.model)


def _codedraft_daemon(gguf: Path, context: int) -> Measured:
    """As `codedraft daemon --model FILE` loads (`load_served_model`): besides the engine, token
    healing's vocabulary index and the daemon's own figures (characters a token); the generation goes
    through the daemon's backend (its engine thread)."""
    from inference.backends.local_engine import EngineBackend
    from inference.backends.local_model import ServeSettings, load_served_model
    from inference.config import EngineConfig, SamplingParams
    from inference.engine.sequence import Request

    started = time.perf_counter()
    settings = ServeSettings(model_dir=gguf, draft_dir=None, device="cpu", adapt_threads=False)
    served = load_served_model(settings, EngineConfig(num_kv_blocks=context // EngineConfig().block_size))
    ready = time.perf_counter() - started
    backend = served.backend
    assert isinstance(backend, EngineBackend)  # a local model's
    print(f"codedraft weights {served.weights}")

    async def stream() -> None:
        sampling = SamplingParams(max_tokens=16, ignore_eos=True)
        request = Request("r", prompt_token_ids=served.tokenizer.encode(PROMPT), sampling=sampling)
        async for _ in backend.generate(request):
            pass

    return ready, lambda: asyncio.run(stream()), _repacking_ended(backend.engine.target.model)


def _llamacpp(gguf: Path, context: int) -> Measured:
    import llama_cpp

    started = time.perf_counter()
    llm = llama_cpp.Llama(model_path=str(gguf), n_ctx=context, verbose=False)
    ready = time.perf_counter() - started
    return ready, lambda: llm(PROMPT, max_tokens=16, temperature=0.0), lambda: None


ENGINES: dict[str, Callable[[Path, int], Measured]] = {
    "codedraft": _codedraft,
    "codedraft-daemon": _codedraft_daemon,
    "llamacpp": _llamacpp,
}


def main(argv: list[str] | None = None) -> int:
    """Measure one engine (see the module's docstring)."""
    parser = argparse.ArgumentParser(prog="python -m bench.ready_memory", description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", type=Path, required=True)
    parser.add_argument("--engine", choices=tuple(ENGINES), required=True)
    parser.add_argument("--context", type=int, default=4096, help="tokens of KV cache (default 4096)")
    args = parser.parse_args(argv)
    ready, generate, settle = ENGINES[args.engine](args.gguf, args.context)
    loaded_rss, loaded_peak = memory_mb()
    generate()
    rss, peak = memory_mb()
    settle()
    settled_rss, settled_peak = memory_mb()
    print(
        f"{args.engine}: ready in {ready:.1f} s; after loading {loaded_rss:.0f} MB resident "
        f"(peak {loaded_peak:.0f}); after 16 tokens {rss:.0f} MB (peak {peak:.0f}); "
        f"settled (repacked) {settled_rss:.0f} MB (peak {settled_peak:.0f}); "
        f"file {args.gguf.stat().st_size / 2**20:.0f} MiB, {args.context}-token context"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
