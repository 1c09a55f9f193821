"""A Complete's last chunk says how sure the model was of each line it sent (RequestFigures.lines)."""

from __future__ import annotations

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import InferenceClient
from tests.inference.server.helpers import RunningDaemon


async def test_the_last_chunk_carries_one_confidence_entry_per_line_sent(running: RunningDaemon) -> None:
    request = pb.CompleteRequest(
        prefix="def f():\n    return ",
        sampling=pb.SamplingParams(max_tokens=24),
        token_healing=False,
        speculation=pb.SPECULATION_MODE_OFF,
    )
    result = await InferenceClient.collect(running.client.complete(request))
    figures = result.figures
    assert len(figures.lines) == result.text.count("\n") + 1
    # Every token counts but the one that ended the text (an end or stop token: no stop strings here).
    ended = result.finish_reason in (pb.FINISH_REASON_EOS, pb.FINISH_REASON_STOP)
    assert sum(line.tokens for line in figures.lines) == figures.generated_tokens - ended
    first = figures.lines[0]
    assert first.min_logprob <= first.mean_logprob <= 0.0
    assert figures.HasField("first_token_logprob") and figures.first_token_logprob >= first.min_logprob
