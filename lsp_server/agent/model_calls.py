"""How the agent asks the daemon: Generate requests, and whether the model's template takes tools."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.agent.loop import Generate

MAX_REPLY_TOKENS = 1024
GENERATE_TIMEOUT_S = 300.0

StreamGenerate = Callable[[pb.GenerateRequest, float], AsyncIterator[pb.GenerateChunk]]


def supports_tool_calls(model_dir: str) -> bool:
    """Whether the checkpoint's chat template renders Hermes-style ``<tool_call>`` tools (Qwen2.5 does).

    The daemon's wire API carries plain chat messages, so the loop declares its tools in the system
    message exactly as such a template would; for other templates it runs the fixed pipeline.
    """
    try:
        config = json.loads((Path(model_dir) / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    template = config.get("chat_template") if isinstance(config, dict) else None
    if isinstance(template, list):
        template = " ".join(str(t.get("template", "")) for t in template if isinstance(t, dict))
    return isinstance(template, str) and "<tool_call>" in template and "tools" in template


def reply_token_limit(info: pb.ModelInfo) -> int:
    """Most reply tokens to ask a daemon for: its own limit, and half the model's context at most so
    the prompt keeps room."""
    limits = [MAX_REPLY_TOKENS]
    if info.max_new_tokens:
        limits.append(info.max_new_tokens)
    if info.model.context_length:
        limits.append(info.model.context_length // 2)
    return max(1, min(limits))


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
