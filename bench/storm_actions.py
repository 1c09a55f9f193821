"""The cancel storm's requests: what each client does (finish, cancel mid-stream, a short deadline,
disconnect, Generate) and how each request ended, as ``tests/inference/server/test_stress.py`` mixes
them, but with code prompts and completion lengths of an editor's.

Two clients share each session, so a completion of one supersedes the other's (cancel-previous).
Every request but a short-deadline one carries the long deadline: such a request may end done,
cancelled, superseded or disconnected as its action allows, never past its deadline.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass

import grpc

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.api.codedraft.v1 import inference_pb2_grpc as pb_grpc

ACTIONS = ("finish", "cancel", "deadline", "disconnect", "generate")
DONE = {pb.FINISH_REASON_LENGTH, pb.FINISH_REASON_EOS, pb.FINISH_REASON_STOP, pb.FINISH_REASON_REPETITION}
"""The finish reasons of a request that ended by itself (a loop the daemon stopped is one of them)."""
CANCELLED_BY_CALL = "cancelled: cancelled by a Cancel call"
ALLOWED = {
    "finish": {"done", "superseded"},
    "generate": {"done"},
    "cancel": {CANCELLED_BY_CALL, "superseded", "done"},
    "deadline": {"DEADLINE_EXCEEDED", "done", "superseded"},
    "disconnect": {"disconnected", "superseded", "done"},
}
"""The outcomes each action may end with; anything else is unexpected."""
SHORT_DEADLINE_S = (0.01, 0.5)
COMPLETION_TOKENS = (16, 64)
STREAMED_TOKENS = 200
"""max_tokens of the requests cancelled or dropped mid-stream: long enough to be running when that happens."""


@dataclass(frozen=True)
class PlannedRequest:
    """One request of the storm: which client sends it, with which action, prompt and deadline."""

    client: int
    action: str
    request: pb.CompleteRequest
    timeout_s: float

    @property
    def long_deadline(self) -> bool:
        return self.action != "deadline"


@dataclass(frozen=True)
class Outcome:
    """How one request ended (an outcome of :data:`ALLOWED` or a status name) and after how long."""

    action: str
    outcome: str
    seconds: float
    long_deadline: bool

    @property
    def expected(self) -> bool:
        return self.outcome in ALLOWED[self.action]

    @property
    def timed_out(self) -> bool:
        """A long-deadline request that ran out of time: what the storm must never see."""
        return self.long_deadline and self.outcome == "DEADLINE_EXCEEDED"


def plan_storm(
    prompts: list[pb.CompleteRequest], clients: int, seed: int, deadline_s: float, tag: str
) -> list[PlannedRequest]:
    """One request per prompt, spread round-robin over ``clients``; actions, lengths and short
    deadlines drawn from ``seed`` alone (so two storms with the same seed and size do the same)."""
    rng = random.Random(seed)
    planned = []
    for index, prompt in enumerate(prompts):
        action = rng.choice(ACTIONS)
        client = index % clients
        request = pb.CompleteRequest()
        request.CopyFrom(prompt)
        request.request_id = f"{tag}-r{index}"
        request.session_id = f"{tag}-s{client % max(1, clients // 2)}"
        streamed = action in ("cancel", "disconnect")
        request.sampling.max_tokens = STREAMED_TOKENS if streamed else rng.randint(*COMPLETION_TOKENS)
        timeout = rng.uniform(*SHORT_DEADLINE_S) if action == "deadline" else deadline_s
        planned.append(PlannedRequest(client, action, request, timeout))
    return planned


def _call(stub: pb_grpc.InferenceStub, planned: PlannedRequest) -> grpc.aio.UnaryStreamCall:
    request = planned.request
    if planned.action == "generate":
        generate = pb.GenerateRequest(
            request_id=request.request_id,
            prompt=request.prefix,
            sampling=request.sampling,
            speculation=request.speculation,
        )
        return stub.Generate(generate, timeout=planned.timeout_s)
    return stub.Complete(request, timeout=planned.timeout_s)


async def run_one(stub: pb_grpc.InferenceStub, planned: PlannedRequest) -> Outcome:
    """Sends one request and does its action; never raises for a status the daemon answers."""
    started = time.perf_counter()
    action, request_id = planned.action, planned.request.request_id
    call = _call(stub, planned)
    last = None
    cancel_sent = False
    try:
        async for chunk in call:
            last = chunk
            if action == "cancel" and not chunk.done and not cancel_sent:
                cancel_sent = True
                await stub.Cancel(pb.CancelRequest(request_id=request_id), timeout=planned.timeout_s)
            if action == "disconnect":
                call.cancel()
                break
    except grpc.aio.AioRpcError as error:
        details = error.details() or ""
        if error.code() == grpc.StatusCode.CANCELLED:
            outcome = "superseded" if "superseded by request" in details else f"cancelled: {details}"
        else:
            outcome = error.code().name
        return Outcome(action, outcome, time.perf_counter() - started, planned.long_deadline)
    if action == "disconnect":
        outcome = "disconnected"
    elif last is None or not last.done:
        outcome = "ended without a last chunk"
    else:
        outcome = "done" if last.finish_reason in DONE else pb.FinishReason.Name(last.finish_reason)
    return Outcome(action, outcome, time.perf_counter() - started, planned.long_deadline)


async def run_storm(target: str, planned: list[PlannedRequest], clients: int) -> list[Outcome]:
    """Every planned request, each client (a channel of its own) sending its share one after another;
    the outcomes in the order of ``planned``."""
    channels = [grpc.aio.insecure_channel(target) for _ in range(clients)]

    async def one_client(index: int) -> list[tuple[int, Outcome]]:
        stub = pb_grpc.InferenceStub(channels[index])
        mine = [(i, p) for i, p in enumerate(planned) if p.client == index]
        return [(i, await run_one(stub, p)) for i, p in mine]

    try:
        results = await asyncio.gather(*(one_client(c) for c in range(clients)))
    finally:
        for channel in channels:
            await channel.close()
    return [outcome for _, outcome in sorted((r for rs in results for r in rs), key=lambda r: r[0])]
