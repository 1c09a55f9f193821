"""What one forward pass of T new rows costs the default model (SmolLM2-135M) against one row, per
weights form, at a short and a next-edit-sized context: the cost of verifying T - 1 proposals.

The K/V pool holds random values (the cost does not depend on them); one torch thread; this
thread's CPU time, the minimum of `--rounds`.

    python -m bench.model_rows_cost --weights q4_1,q4_1_q8
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from inference.default_model import default_model
from inference.layers.paged_kv import AttentionMetadata, KVCache
from inference.loading import load_model
from inference.models.base import CausalLM

ROWS = (1, 2, 4, 8, 16)
BLOCK = 16


def _costs(model: CausalLM, context: int, rounds: int) -> dict[int, float]:
    blocks = context // BLOCK + 2
    kv = KVCache.allocate(model.config, blocks, BLOCK, torch.float32, "cpu")
    for cache in (*kv.k, *kv.v):
        cache.normal_(generator=torch.Generator().manual_seed(0))
    table = torch.arange(blocks)
    costs = {}
    for rows in ROWS:
        positions = torch.arange(context - rows, context)
        meta = AttentionMetadata(positions.clone(), table, context, BLOCK)
        ids = torch.randint(0, 1000, (rows,), generator=torch.Generator().manual_seed(rows))
        best = float("inf")
        with torch.inference_mode():
            for _ in range(rounds):
                start = time.thread_time()
                model(ids, positions, kv, meta)
                best = min(best, time.thread_time() - start)
        costs[rows] = best
    return costs


def main(argv: list[str]) -> int:
    """Print each form's cost of T rows at each context."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.model_rows_cost", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--weights", default="q4_1,q4_1_q8", help="comma-separated weights forms")
    parser.add_argument("--contexts", default="256,3700", help="comma-separated context lengths")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    target = default_model().target
    for form in args.weights.split(","):
        model = load_model(target, device="cpu", weights=form).model
        assert isinstance(model, CausalLM)
        for context in (int(c) for c in args.contexts.split(",")):
            costs = _costs(model, context, args.rounds)
            cells = "  ".join(f"{t}: {costs[t] * 1e3:6.1f} ms ({costs[t] / costs[1]:.2f}x)" for t in ROWS)
            print(f"{form:8s} context {context:5d}  {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
