"""A bounded stress test: many concurrent clients with random cancels, deadlines and disconnects.

Afterwards every request ended with a status its action allows, the KV pool accounting is exact
(nothing leaked), and the daemon still answers a fresh request exactly as the engine does in-process.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from pathlib import Path

import grpc

from bench.storm_actions import ACTIONS, ALLOWED, PlannedRequest, run_one
from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.api.codedraft.v1 import inference_pb2_grpc as pb_grpc
from inference.client import InferenceClient
from inference.config import SamplingParams
from inference.loading import load_model
from tests.inference.server.helpers import RunningDaemon, engine_reference, wait_idle

CLIENTS = 16
REQUESTS_PER_CLIENT = 2


def _planned(rng: random.Random, client: int, n: int) -> PlannedRequest:
    """One request with a random action, for ``storm_actions.run_one`` to send and read."""
    action = rng.choice(ACTIONS)
    prefix = f"def handler_{client}_{n}(event):\n    " + "x = 1\n    " * rng.randint(0, 20)
    sampling = pb.SamplingParams(max_tokens=rng.randint(2, 8), temperature=rng.choice([0.0, 0.8]), seed=n)
    # Two clients share each session, so cancel-previous happens along the way (Generate has none).
    request = pb.CompleteRequest(
        request_id=f"c{client}-r{n}",
        session_id=f"s{client % (CLIENTS // 2)}",
        prefix=prefix,
        sampling=sampling,
    )
    timeout = rng.uniform(0.01, 0.3) if action == "deadline" else 30.0
    if action in ("cancel", "disconnect"):
        request.sampling.max_tokens = 200
    return PlannedRequest(client, action, request, timeout)


async def test_many_clients_cancels_deadlines_and_disconnects(
    running: RunningDaemon, tiny_model_dir: Path
) -> None:
    rng = random.Random(1234)
    channels = [grpc.aio.insecure_channel(running.address.grpc_target()) for _ in range(CLIENTS)]

    async def client(index: int) -> list[tuple[str, str]]:
        stub = pb_grpc.InferenceStub(channels[index])
        local = random.Random(rng.random())
        outcomes = [await run_one(stub, _planned(local, index, n)) for n in range(REQUESTS_PER_CLIENT)]
        return [(outcome.action, outcome.outcome) for outcome in outcomes]

    try:
        results = [r for rs in await asyncio.gather(*(client(i) for i in range(CLIENTS))) for r in rs]
    finally:
        for channel in channels:
            await channel.close()
    unexpected = [(action, outcome) for action, outcome in results if outcome not in ALLOWED[action]]
    assert not unexpected, unexpected
    assert len(results) == CLIENTS * REQUESTS_PER_CLIENT
    assert len(Counter(action for action, _ in results)) == len(ACTIONS)

    stats = await wait_idle(running)
    assert stats.requests_total == stats.requests_finished == CLIENTS * REQUESTS_PER_CLIENT
    assert stats.kv_blocks_used == 0

    prompt = "def fresh(value):\n    return "
    fresh = await InferenceClient.collect(
        running.client.generate(pb.GenerateRequest(prompt=prompt, sampling=pb.SamplingParams(max_tokens=12)))
    )
    tokenizer = load_model(tiny_model_dir, "cpu").tokenizer
    expected, _ = engine_reference(tiny_model_dir, tokenizer.encode(prompt), SamplingParams(max_tokens=12))
    assert fresh.text == expected
    await wait_idle(running)
