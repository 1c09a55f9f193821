"""PredictEdit in front of a remote OpenAI-compatible engine: the daemon renders the next-edit prompt
and sends it as a raw prompt; the reply equals the engine's own PredictEdit."""

from __future__ import annotations

from pathlib import Path

import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.remote_model import RemoteSettings
from tests.inference.faced_daemon import FacedDaemon, start_remote_daemon

REQUEST = pb.PredictEditRequest(
    path="a.py",
    region="def area(width, height):\n    return width * height\n",
    cursor=9,
    history=[
        pb.PastEdit(
            path="a.py", diff="--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-def size(w, h):\n+def area(w, h):\n"
        )
    ],
    sampling=pb.SamplingParams(max_tokens=12),
)


@pytest.mark.parametrize("prompt_format", ["text", "tokens"])
async def test_a_prediction_through_the_remote_engine_equals_the_engines_own(
    faced: FacedDaemon, tiny_model_dir: Path, short_dir: Path, prompt_format: str
) -> None:
    settings = RemoteSettings(
        base_url=faced.base_url, model="tiny-base", tokenizer_path=tiny_model_dir, prompt_format=prompt_format
    )
    front = await start_remote_daemon(settings, short_dir)
    try:
        expected = await faced.client.predict_edit(REQUEST, 60.0)
        got = await front.client.predict_edit(REQUEST, 60.0)
        info = await front.client.model_info()
    finally:
        await front.client.close()
        await front.daemon.stop()
    assert info.next_edit_format == got.format == expected.format == "chat"
    assert (got.parsed, got.rewritten_region, got.finish_reason) == (
        expected.parsed,
        expected.rewritten_region,
        expected.finish_reason,
    )
    assert got.figures.prompt_tokens == expected.figures.prompt_tokens > 0
    assert got.figures.generated_tokens == expected.figures.generated_tokens
