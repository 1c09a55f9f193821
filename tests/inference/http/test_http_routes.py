"""The HTTP face of a daemon serving two models: /v1/models lists both, /v1/chat/completions is the
chat model's, /v1/completions and /infill the completion model's (the scripted models' texts say
which wrote each reply)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import openai
import pytest

from tests.fixtures.scripted_model import CHAT_SCRIPT
from tests.inference.conftest import COMPLETION_TEXT
from tests.inference.faced_daemon import FacedDaemon, start_faced_daemon


@pytest.fixture
async def routed_face(completer_dir: Path, chatter_dir: Path, short_dir: Path) -> AsyncIterator[FacedDaemon]:
    daemon = await start_faced_daemon(completer_dir, short_dir, chat_dir=chatter_dir)
    yield daemon
    await daemon.close()


async def test_each_face_reaches_the_model_of_its_task(routed_face: FacedDaemon) -> None:
    async with openai.AsyncOpenAI(base_url=routed_face.base_url, api_key="unused", max_retries=0) as client:
        assert [m.id for m in (await client.models.list()).data] == ["completer", "chatter"]
        chat = await client.chat.completions.create(
            model="", messages=[{"role": "user", "content": "Rename x."}], max_tokens=3
        )
        completion = await client.completions.create(
            model="", prompt="<|fim_prefix|><|fim_suffix|><|fim_middle|>", max_tokens=5
        )
    reply = chat.choices[0].message.content or ""
    assert reply.startswith("value") and CHAT_SCRIPT.startswith(reply)
    assert (chat.model, completion.model) == ("chatter", "completer")
    assert completion.choices[0].text == COMPLETION_TEXT
    infill = {"input_prefix": "def total(items):\n", "input_suffix": "", "n_predict": 5}
    async with (
        aiohttp.ClientSession() as session,
        session.post(routed_face.base_url.removesuffix("/v1") + "/infill", json=infill) as answer,
    ):
        body = await answer.json()
    assert (answer.status, body["model"]) == (200, "completer")
    stats = await routed_face.client.stats()
    assert {(e.served_by, e.stats.requests_total) for e in stats.models} == {("completion", 2), ("chat", 1)}
