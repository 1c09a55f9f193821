"""Prefill through the daemon: it computes the prompt Complete would build, so that the completion at
that cursor computes only its last partial block; a completion of the session supersedes a running
prefill within one layer of its pass, and a prefill never supersedes a completion. (A daemon in front
of a remote engine skips it: tests/inference/backends.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import DaemonError, InferenceClient
from inference.config import EngineConfig
from tests.fixtures.gated_model import GatedModel
from tests.fixtures.waiting import wait_until
from tests.inference.server.helpers import RunningDaemon, start_daemon, wait_idle

CHUNK = 32  # background_prefill_chunk of the gated daemon


def _at_cursor(session_id: str, request_id: str = "") -> pb.CompleteRequest:
    """A completion request of about 300 prompt tokens, as the language server would send it."""
    prefix = "".join(f"def function_{i}(value):\n    return value * {i}\n\n" for i in range(24))
    return pb.CompleteRequest(
        request_id=request_id,
        session_id=session_id,
        prefix=prefix + "def last(value):\n    return ",
        suffix="\n\nprint(last(2))\n",
        path="funcs.py",
        language="python",
        snippets=[pb.ContextSnippet(path="util.py", text="def helper():\n    return 1\n", score=1.0)],
        sampling=pb.SamplingParams(max_tokens=4),
    )


async def test_a_completion_after_a_prefill_computes_only_its_last_partial_block(
    running: RunningDaemon,
) -> None:
    prefill = await running.client.prefill(_at_cursor("doc", "warm"))
    assert prefill.prefilled and prefill.request_id == "warm" and not prefill.skipped
    figures = prefill.figures
    assert figures.prompt_tokens == 470 and figures.generated_tokens == 0
    assert figures.reused_tokens + figures.computed_tokens == figures.prompt_tokens
    stats = await wait_idle(running)
    assert stats.generated_tokens == 0 and stats.requests_finished == 1
    done = await InferenceClient.collect(running.client.complete(_at_cursor("doc")))
    assert done.figures.prompt_tokens == figures.prompt_tokens
    # Every token but the last (its logits are needed) was reused, the prefill's partial block too.
    assert done.figures.reused_tokens == figures.prompt_tokens - 1
    assert done.figures.computed_tokens == 1
    assert done.figures.generated_tokens == 4


async def test_a_prefill_of_the_same_prompt_again_computes_one_token(
    running: RunningDaemon,
) -> None:
    first = await running.client.prefill(_at_cursor("doc"))
    again = await running.client.prefill(_at_cursor("doc"))
    assert again.figures.prompt_tokens == first.figures.prompt_tokens
    assert again.figures.computed_tokens == 1


@pytest.fixture
async def gated(tiny_model_dir: Path, short_dir: Path) -> AsyncIterator[tuple[RunningDaemon, GatedModel]]:
    """A daemon whose first forward pass of CHUNK tokens or more waits for the test."""
    models: list[GatedModel] = []

    def wrap(model: object) -> GatedModel:
        models.append(GatedModel(model, CHUNK))  # type: ignore[arg-type]
        return models[0]

    config = EngineConfig(num_kv_blocks=64, draft_num_kv_blocks=16, background_prefill_chunk=CHUNK)
    daemon = await start_daemon(tiny_model_dir, short_dir, engine_config=config, wrap_target=wrap)
    yield daemon, models[0]
    models[0].release.set()
    await daemon.client.close()
    await daemon.daemon.stop()


async def test_a_completion_supersedes_its_sessions_prefill_within_one_layer(
    gated: tuple[RunningDaemon, GatedModel],
) -> None:
    running, gate = gated
    prefill = asyncio.ensure_future(running.client.prefill(_at_cursor("doc", "warm")))
    await asyncio.to_thread(gate.entered.wait, 10)  # the prefill's first step has started
    completion = asyncio.ensure_future(
        InferenceClient.collect(running.client.complete(_at_cursor("doc", "typed")))
    )

    async def both_live() -> bool:
        # Active at the server is not yet in the engine (the request is prepared first, slowly on a
        # busy machine): the engine's queue holding it is what sets the interrupt.
        stats = await running.client.stats()
        return stats.requests_active == 2 and stats.queue_depth >= 1

    await wait_until(both_live, 10, "the completion reaching the engine")
    gate.release.set()
    with pytest.raises(DaemonError) as stopped:
        await prefill
    assert stopped.value.code == grpc.StatusCode.CANCELLED
    assert "superseded by request typed" in stopped.value.message
    done = await completion
    # The prefill's pass stopped before its second layer when the completion arrived: the completion
    # waited for one layer, not for the chunk, and the chunk's unfinished work counts for nothing.
    assert done.figures.reused_tokens == 0
    assert done.figures.computed_tokens == done.figures.prompt_tokens
    assert done.figures.generated_tokens == 4
    stats = await wait_idle(running)
    assert stats.requests_cancelled == 1


async def test_a_prefill_never_supersedes_a_completion(gated: tuple[RunningDaemon, GatedModel]) -> None:
    running, gate = gated
    completion = asyncio.ensure_future(
        InferenceClient.collect(running.client.complete(_at_cursor("doc", "typed")))
    )
    await asyncio.to_thread(gate.entered.wait, 10)
    prefill = asyncio.ensure_future(running.client.prefill(_at_cursor("doc", "warm")))

    async def both_live() -> bool:
        return (await running.client.stats()).requests_active == 2

    await wait_until(both_live, 10, "the prefill reaching the daemon")
    gate.release.set()
    done = await completion
    assert done.finish_reason == pb.FINISH_REASON_LENGTH and done.figures.generated_tokens == 4
    warm = await prefill
    assert warm.prefilled
    await wait_idle(running)
