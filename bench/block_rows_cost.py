"""What k rows of x cost against one in the block-quantized products (`q4_1`: float32 activations;
`q4_1_q8`: 8-bit activations, integer dot products), on SmolLM2-135M's shapes with the weights out
of cache: `--layers` x [(576 -> 1536), (1536 -> 576), (576 -> 576), (576 -> 1536)] random Q4_1
linears, x randn, one torch thread. Rounds interleave the forms and row counts; the minimum of
`--rounds` is reported, in ms of this thread's CPU time (other processes on the machine preempt it
without counting) for one pass over every layer, and as a multiple of one row's time.

    python -m bench.block_rows_cost --rounds 7
"""

from __future__ import annotations

import argparse
import sys
import time

import torch
from torch import nn

from inference.layers.block_linear import Q4_1Linear
from inference.layers.int8_activation_linear import Q4_1Q8Linear

SHAPES = ((576, 1536), (1536, 576), (576, 576), (576, 1536))
ROWS = (1, 2, 4, 8, 12, 16)


def _layers(count: int) -> dict[str, list[Q4_1Linear] | list[Q4_1Q8Linear]]:
    torch.manual_seed(0)
    plain = [
        Q4_1Linear(nn.Linear(i, o, bias=False).requires_grad_(False)) for _ in range(count) for i, o in SHAPES
    ]
    return {"q4_1": plain, "q4_1_q8": [Q4_1Q8Linear(layer) for layer in plain]}


def _pass(layers: list[Q4_1Linear] | list[Q4_1Q8Linear], inputs: dict[int, torch.Tensor], rows: int) -> float:
    start = time.thread_time()
    for layer in layers:
        layer(inputs[layer.in_features][:rows])
    return time.thread_time() - start


def main(argv: list[str]) -> int:
    """Print the rows cost curve of both forms."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.block_rows_cost", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--layers", type=int, default=24, help="copies of the 4 shapes (24: about 40 MB)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds; the minimum is kept")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    forms = _layers(args.layers)
    inputs = {k: torch.randn(max(ROWS), k) for k in (576, 1536)}
    best = {(form, rows): float("inf") for form in forms for rows in ROWS}
    for _ in range(args.rounds):
        for rows in ROWS:
            for form, layers in forms.items():
                best[form, rows] = min(best[form, rows], _pass(layers, inputs, rows))
    print(f"{'rows':>5} " + " ".join(f"{form + ' ms':>11} {'x 1 row':>8}" for form in forms))
    for rows in ROWS:
        cells = [f"{best[form, rows] * 1e3:11.2f} {best[form, rows] / best[form, 1]:8.2f}" for form in forms]
        print(f"{rows:5d} " + " ".join(cells))
    one = best["q4_1", 1]
    print(
        "q4_1_q8 against q4_1's one row: " + ", ".join(f"{r}: {best['q4_1_q8', r] / one:.2f}" for r in ROWS)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
