"""How the agent asks the daemon: its chat turns as Generate requests."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.agent.loop import Generate

# A whole file rewritten may need this many tokens; the daemon lowers it to what the model has room for.
MAX_REPLY_TOKENS = 1024
# One corrected line, or the few lines around it a small model writes anyway: a small model that
# rewrites the whole file instead would otherwise spend a thousand tokens on a reply that is refused.
LINE_REPLY_TOKENS = 160
GENERATE_TIMEOUT_S = 300.0

StreamGenerate = Callable[[pb.GenerateRequest, float], AsyncIterator[pb.GenerateChunk]]


def reply_tokens(reply_form: str) -> int:
    """Most tokens of one reply in ``reply_form`` (``FixTask.reply_form``)."""
    return LINE_REPLY_TOKENS if reply_form == "line" else MAX_REPLY_TOKENS


def daemon_generate(
    stream: StreamGenerate,
    session_id: str,
    on_delta: Callable[[str, str], None] | None = None,
    max_tokens: int = MAX_REPLY_TOKENS,
) -> Generate:
    """A :data:`Generate` over a daemon stream; ``on_delta(request_id, text)`` sees the reply grow."""

    async def generate(messages: list[pb.ChatMessage]) -> str:
        request = pb.GenerateRequest(
            request_id=uuid.uuid4().hex,
            session_id=session_id,
            chat=pb.ChatMessages(messages=messages),
            sampling=pb.SamplingParams(temperature=0.0, max_tokens=max_tokens),
        )
        pieces: list[str] = []
        async for chunk in stream(request, GENERATE_TIMEOUT_S):
            if chunk.text_delta:
                pieces.append(chunk.text_delta)
                if on_delta is not None:
                    on_delta(request.request_id, chunk.text_delta)
        return "".join(pieces)

    return generate
