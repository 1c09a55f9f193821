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


# A small model asked again with a prompt that barely changed answers greedily what it answered
# before: its later replies in the one-line form are sampled (seeded, so a run can be repeated).
RETRY_TEMPERATURE = 0.8


def daemon_generate(
    stream: StreamGenerate,
    session_id: str,
    on_delta: Callable[[str, str], None] | None = None,
    reply_form: str = "blocks",
) -> Generate:
    """A :data:`Generate` over a daemon stream; ``on_delta(request_id, text)`` sees the reply grow.

    ``reply_form`` (``FixTask.reply_form``) sets the reply's length, and for ``"line"`` the sampling
    of every reply after the first; the first is always greedy.
    """
    one_line = reply_form == "line"
    max_tokens = LINE_REPLY_TOKENS if one_line else MAX_REPLY_TOKENS
    calls = 0

    async def generate(messages: list[pb.ChatMessage]) -> str:
        nonlocal calls
        calls += 1
        temperature = RETRY_TEMPERATURE if one_line and calls > 1 else 0.0
        request = pb.GenerateRequest(
            request_id=uuid.uuid4().hex,
            session_id=session_id,
            chat=pb.ChatMessages(messages=messages),
            sampling=pb.SamplingParams(temperature=temperature, seed=calls, max_tokens=max_tokens),
        )
        pieces: list[str] = []
        async for chunk in stream(request, GENERATE_TIMEOUT_S):
            if chunk.text_delta:
                pieces.append(chunk.text_delta)
                if on_delta is not None:
                    on_delta(request.request_id, chunk.text_delta)
        return "".join(pieces)

    return generate
