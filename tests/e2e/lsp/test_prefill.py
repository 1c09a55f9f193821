"""The prefill of the prompt at a resting cursor, through a real ``codedraft lsp`` and a real daemon on
the embedded model: the local prompt and then the full one are computed, and the completion there
afterwards sends the full prompt and computes only its last token."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from inference.client import InferenceClient
from inference.defaults import default_model_dir
from tests.e2e.daemon_process import running_daemon
from tests.e2e.lsp_harness import inline_params, open_document, running_lsp, wait_for_status
from tests.fixtures.waiting import wait_until

SOURCE = (
    "".join(
        f"def scale_{i}(values, factor={i}):\n    result = []\n    for value in values:\n"
        f"        result.append(value * factor)\n    return result\n\n\n"
        for i in range(12)
    )
    + "def total_of(values):\n    total = 0\n    \n"
)
CURSOR = (SOURCE.count("\n") - 1, 4)  # the blank line in total_of
SETTINGS = {"completion": {"prefillDelayMs": 300, "debounceMs": 1, "maxDebounceMs": 1, "maxTokens": 8}}


@pytest.fixture(scope="module")
def embedded_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("prefill")
    with running_daemon(default_model_dir(), root / "run" / "d.sock", root / "daemon.log") as daemon:
        yield daemon.address


async def _finished_requests(address: str) -> tuple[int, int]:
    async with InferenceClient(address) as client:
        stats = await client.stats(timeout=5.0)
    return int(stats.requests_finished), int(stats.requests_active)


async def test_a_completion_where_the_cursor_rested_reuses_the_prefilled_prompt(
    tmp_path: Path, embedded_daemon: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    before, _ = await _finished_requests(embedded_daemon)
    async with running_lsp(workspace, tmp_path, daemon_address=embedded_daemon, settings=SETTINGS) as client:
        await wait_for_status(client, lambda s: s.get("state") in ("ready", "indexing"))
        uri = open_document(client, workspace / "scale.py", SOURCE)
        line, character = CURSOR
        # Sent within the delay: it replaces didOpen's prefill at the start of the document.
        client.protocol.notify(
            "codedraft/cursor",
            {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}},
        )

        async def prefilled() -> bool:  # the local prompt (the daemon's speed is unmeasured), then the full
            finished, active = await _finished_requests(embedded_daemon)
            return finished == before + 2 and active == 0

        await wait_until(prefilled, 60, "the prefill finishing in the daemon")
        result = await client.text_document_inline_completion_async(inline_params(uri, line, character))
        assert result is not None
        status = await wait_for_status(client, lambda s: "lastCompletion" in s)
        last = status["lastCompletion"]
        assert last["promptTokens"] > 400 and not last["localPrompt"]
        # Every token but the last (its logits are needed) came from the prefill.
        assert last["reusedTokens"] == last["promptTokens"] - 1
        assert (await _finished_requests(embedded_daemon))[0] == before + 3
