"""One-row (decode) and many-row products of `native_q8` on K-quant matrices, the file's blocks
against the same blocks repacked eight rows at a time (`kernels/gguf_repacked_*.h`), interleaved
in one process, 1 thread: per-call µs, median of the repetitions (docs/benchmarks.md).

Random blocks of the 1.5B-class file's shapes (Qwen2.5-Coder-1.5B's) and Gemma 3 270M's (its Q8_0
tied head and Q5_0 layers too). "DRAM":
a pass over distinct copies whose sum is larger than the caches, as a decode step reads its
matrices; "cached": one copy called over and over. The file's blocks are in 4 KiB pages, as the
file's mapping is; the repacked ones where `gguf_q8_repack` puts them (2 MiB pages). The outputs are
checked equal before timing.

    python -m bench.repacked_rows [--rows 1] [--repeats 7] [--type Q4_K|Q6_K|Q8_0|Q5_0]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
import torch
from gguf import GGMLQuantizationType as Q

from inference.layers.cpu_kernels import load_cpu_kernels

# name: (rows, columns, copies in the DRAM pass)
SHAPES = {
    Q.Q4_K: {
        "1.5B gate/up 8960x1536": (8960, 1536, 24),
        "1.5B down 1536x8960": (1536, 8960, 24),
        "1.5B q/o 1536x1536": (1536, 1536, 60),
        "1.5B k 256x1536": (256, 1536, 60),
        "Gemma o 640x1024": (640, 1024, 60),
        "Gemma down 640x2048": (640, 2048, 60),
    },
    Q.Q6_K: {
        "1.5B down 1536x8960": (1536, 8960, 24),
        "1.5B v 256x1536": (256, 1536, 60),
        "1.5B tied head 49152x1536": (49152, 1536, 3),
        "Gemma down 640x2048": (640, 2048, 60),
    },
    Q.Q8_0: {
        "Gemma tied head 262144x640": (262144, 640, 2),
        "Gemma v 256x640": (256, 640, 120),
    },
    Q.Q5_0: {
        "Gemma gate/up 2048x640": (2048, 640, 60),
        "Gemma q 1024x640": (1024, 640, 120),
        "Gemma k 256x640": (256, 640, 240),
        "Gemma down 640x2048": (640, 2048, 60),
    },
}
BLOCK = {Q.Q4_K: (256, 144), Q.Q6_K: (256, 210), Q.Q8_0: (32, 34), Q.Q5_0: (32, 22)}  # weights, bytes


def random_blocks(rows: int, columns: int, qtype: Q, rng: np.random.Generator) -> torch.Tensor:
    """Random blocks whose float16 factors are small and finite (speed only)."""
    weights, size = BLOCK[qtype]
    data = rng.integers(0, 256, size=(rows, columns // weights, size), dtype=np.uint8)
    start, count = {Q.Q4_K: (0, 2), Q.Q6_K: (208, 1)}.get(qtype, (0, 1))  # d (and Q4_K's dmin) as float16
    data[..., start : start + 2 * count] = np.full((count,), 0.0005, dtype=np.float16).view(np.uint8)
    return torch.from_numpy(data.reshape(rows, -1))


def _per_call(run: Callable[[int], object], copies: int, one: bool) -> float:
    start = time.perf_counter()
    for i in range(copies):
        run(0 if one else i)
    return (time.perf_counter() - start) / copies * 1e6


def measure(qtype: Q, shape: tuple[int, int, int], x_rows: int, repeats: int) -> dict[str, float]:
    """Median µs a call: `file` / `packed` over distinct copies, `... cached` over one."""
    ops = torch.ops.codedraft_cpu
    rows, columns, copies = shape
    base = random_blocks(rows, columns, qtype, np.random.default_rng(rows + columns))
    files, packs = [], []
    for _ in range(copies):
        blocks = torch.empty(base.shape, dtype=torch.uint8).copy_(base)  # 4 KiB pages
        files.append(blocks)
        packs.append(ops.gguf_q8_repack(blocks, int(qtype)))
    x = torch.randn(x_rows, columns)
    assert torch.equal(ops.gguf_q8_linear(x, files[0], int(qtype)),
                       ops.gguf_q8_linear_repacked(x, packs[0], int(qtype), rows))  # fmt: skip

    def file_call(i: int) -> object:
        return ops.gguf_q8_linear(x, files[i], int(qtype))

    def packed_call(i: int) -> object:
        return ops.gguf_q8_linear_repacked(x, packs[i], int(qtype), rows)

    times: dict[str, list[float]] = {k: [] for k in ("file", "packed", "file cached", "packed cached")}
    for repeat in range(repeats):
        order = [("file", file_call), ("packed", packed_call)]
        for key, call in order if repeat % 2 else order[::-1]:
            times[key].append(_per_call(call, copies, one=False))
            call(0)
            times[f"{key} cached"].append(_per_call(call, copies, one=True))
    return {key: statistics.median(value) for key, value in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1, help="rows of x (1: decode)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--type", default="Q4_K", choices=["Q4_K", "Q6_K", "Q8_0", "Q5_0"])
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    load_cpu_kernels()
    qtype = Q[args.type]
    print(f"{args.type}, {args.rows} row(s) of x, 1 thread: per call µs, file's blocks / repacked")
    for name, shape in SHAPES[qtype].items():
        m = measure(qtype, shape, args.rows, args.repeats)
        weights, size = BLOCK[qtype]
        gbs = shape[0] * shape[1] / weights * size / (m["packed"] * 1e-6) / 1e9
        print(
            f"  {name:26s} DRAM {m['file']:8.1f} / {m['packed']:8.1f} ({m['file'] / m['packed']:.2f}x, "
            f"repacked {gbs:.1f} GB/s)   cached {m['file cached']:8.1f} / {m['packed cached']:8.1f} "
            f"({m['file cached'] / m['packed cached']:.2f}x)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
