"""`codedraft complete` shows what the editor would: the language server's completion service (window,
budgets, post-processing) over the same daemon gives the same suggestion for the same cursor."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import InferenceClient
from lsp_server.completion.request import CompletionQuery
from lsp_server.completion.service import CompletionService
from lsp_server.config import CompletionSettings
from lsp_server.model_room import ModelRoom
from tests.codedraft.test_daemon_and_complete import WatchedDaemon, codedraft
from tests.fixtures.scripted_model import COMPLETION_SCRIPT, make_scripted_checkpoint

# A long file: the editor sends a window of it, never the whole.
BODY = "".join(f"def helper_{n}(items):\n    return sum(items) + {n}\n\n\n" for n in range(600))
SOURCE = BODY + "def total_of(items):\n    total = sum(items)\n    \n"
LINE, COLUMN = SOURCE.count("\n") - 1, 4  # 0-based: the blank line's end, in the function's body


async def _in_process(address: str, path: Path) -> tuple[str | None, pb.RequestFigures | None]:
    async with InferenceClient(address) as client:
        room = ModelRoom.of(await client.model_info())

        def stream(request: pb.CompleteRequest, timeout_s: float) -> AsyncIterator[pb.CompleteChunk]:
            return client.complete(request, timeout=timeout_s)

        service = CompletionService(CompletionSettings, stream, None, lambda: room)
        offset = len(SOURCE) - 1
        query = CompletionQuery(path.as_uri(), path.name, "python", SOURCE, offset, LINE, COLUMN)
        outcome = await service.complete(query)
        return outcome.text, outcome.figures


@pytest.mark.slow
def test_complete_gives_the_completion_services_suggestion(tmp_path: Path, short_dir: Path) -> None:
    model = make_scripted_checkpoint(tmp_path / "scripted")
    socket_path = short_dir / "d.sock"
    source = tmp_path / "work" / "totals.py"
    source.parent.mkdir()
    source.write_text(SOURCE)
    daemon = WatchedDaemon("--model", str(model), "--listen", f"unix:{socket_path}")
    try:
        daemon.wait_ready()
        address = f"unix:{socket_path}"
        result = codedraft("complete", f"{source}:{LINE + 1}:{COLUMN + 1}", "--daemon", address, "--json")
        assert result.returncode == 0, result.stderr
        answer = json.loads(result.stdout)
        text, figures = asyncio.run(_in_process(address, source))
        plain = codedraft("complete", f"{source}:{LINE + 1}:{COLUMN + 1}", "--daemon", address)
    finally:
        daemon.terminate()
    assert text == COMPLETION_SCRIPT
    assert (answer["completion"], answer["reason"]) == (COMPLETION_SCRIPT, None)
    assert plain.stdout == COMPLETION_SCRIPT + "\n"
    assert figures is not None
    # the same windowed prompt (the whole file is ~7,000 tokens)
    assert answer["figures"]["prompt_tokens"] == figures.prompt_tokens
    assert figures.prompt_tokens == 226
