"""The daemon lowers max_tokens to the model's room instead of refusing it, and says so in the figures."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import InferenceClient
from tests.fixtures.tiny_models import make_tiny_checkpoint
from tests.inference.server.helpers import LONG_PREFIX, RunningDaemon, start_daemon, wait_idle

CONTEXT = 512  # the tiny model's
DAEMON_LIMIT = 400  # above half the context, so the context's room and the daemon's limit differ


@pytest.fixture
async def roomy(tiny_model_dir: Path, short_dir: Path) -> AsyncIterator[RunningDaemon]:
    daemon = await start_daemon(tiny_model_dir, short_dir, max_new_tokens=DAEMON_LIMIT)
    yield daemon
    await daemon.client.close()
    await daemon.daemon.stop()


async def test_a_huge_max_tokens_is_lowered_to_the_daemons_limit(roomy: RunningDaemon) -> None:
    request = pb.CompleteRequest(prefix=LONG_PREFIX, sampling=pb.SamplingParams(max_tokens=10**9))
    result = await InferenceClient.collect(roomy.client.complete(request))
    assert result.figures.max_tokens_clamped_to == DAEMON_LIMIT
    assert result.figures.generated_tokens == DAEMON_LIMIT  # greedy after "x" runs without a stop
    await wait_idle(roomy)


async def test_a_long_prompt_keeps_half_the_context_and_the_reply_gets_the_rest(roomy: RunningDaemon) -> None:
    far = "".join(f"def far_{i}(x):\n    return x + {i}\n\n" for i in range(120))
    request = pb.CompleteRequest(prefix=far + "x", sampling=pb.SamplingParams(max_tokens=DAEMON_LIMIT))
    result = await InferenceClient.collect(roomy.client.complete(request))
    figures = result.figures
    assert figures.truncated_tokens > 0
    assert figures.prompt_tokens == 252  # cut on whole lines into the CONTEXT // 2 = 256 it may use
    assert figures.max_tokens_clamped_to == CONTEXT - figures.prompt_tokens
    assert figures.prompt_tokens + figures.generated_tokens == CONTEXT


async def test_a_prompt_that_must_not_be_cut_lowers_the_reply_instead(roomy: RunningDaemon) -> None:
    text = "".join(f"def f_{i}(x):\n    return x + {i}\n\n" for i in range(12))
    request = pb.GenerateRequest(
        prompt=text,
        truncation=pb.TRUNCATION_POLICY_REJECT,
        sampling=pb.SamplingParams(max_tokens=DAEMON_LIMIT),
    )
    result = await InferenceClient.collect(roomy.client.generate(request))
    figures = result.figures
    # More than CONTEXT - DAEMON_LIMIT = 112 (so the reply needs the clamp), less than half the context.
    assert figures.prompt_tokens == 177
    assert figures.truncated_tokens == 0
    assert figures.max_tokens_clamped_to == CONTEXT - figures.prompt_tokens


async def test_a_request_that_fits_is_not_marked_clamped(roomy: RunningDaemon) -> None:
    request = pb.CompleteRequest(prefix="def f():\n    return ", sampling=pb.SamplingParams(max_tokens=3))
    result = await InferenceClient.collect(roomy.client.complete(request))
    assert result.figures.max_tokens_clamped_to == 0 and result.figures.generated_tokens == 3


async def test_token_healing_adds_the_tokens_it_removed_after_the_clamp(
    tmp_path: Path, short_dir: Path
) -> None:
    model = make_tiny_checkpoint(
        tmp_path / "prefix-only", "llama", tokenizer_config={"fim_template": "prefix-only"}
    )
    running = await start_daemon(model, short_dir, max_new_tokens=DAEMON_LIMIT)
    far = "".join(f"def far_{i}(x):\n    return x + {i}\n\n" for i in range(120))
    try:
        figures = {}
        for healing in (True, False):
            request = pb.CompleteRequest(
                prefix=far + "def near(value):\n    return valu",
                sampling=pb.SamplingParams(max_tokens=DAEMON_LIMIT),
                token_healing=healing,
            )
            figures[healing] = (await InferenceClient.collect(running.client.complete(request))).figures
    finally:
        await running.client.close()
        await running.daemon.stop()
    healed, typed = figures[True], figures[False]
    removed = typed.prompt_tokens - healed.prompt_tokens
    assert removed > 0, "the prompt ends inside an identifier: healing must back it off"
    # The clamp is the reply's room after the prompt as typed; the removed tokens come on top of it.
    assert healed.max_tokens_clamped_to == typed.max_tokens_clamped_to == CONTEXT - typed.prompt_tokens
    assert typed.generated_tokens == typed.max_tokens_clamped_to
    assert healed.generated_tokens == healed.max_tokens_clamped_to + removed
    assert healed.prompt_tokens + healed.generated_tokens == CONTEXT
