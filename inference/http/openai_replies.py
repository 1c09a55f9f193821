"""codedraft's chunks as the JSON objects of the OpenAI API and of llama.cpp's ``/infill``."""

from __future__ import annotations

import time
from typing import Any

from inference.api.codedraft.v1 import inference_pb2 as pb

_FINISH = {
    pb.FINISH_REASON_STOP: "stop",
    pb.FINISH_REASON_EOS: "stop",
    pb.FINISH_REASON_LENGTH: "length",
    pb.FINISH_REASON_CANCELLED: "cancelled",
    pb.FINISH_REASON_ERROR: "error",
}


def finish_reason(chunk: Any) -> str | None:
    """OpenAI's finish reason of a chunk: None until the last one."""
    return _FINISH.get(chunk.finish_reason, "stop") if chunk.done else None


def usage(figures: pb.RequestFigures) -> dict[str, Any]:
    """OpenAI's ``usage``, with the prompt tokens whose KV was reused as ``cached_tokens``."""
    return {
        "prompt_tokens": figures.prompt_tokens,
        "completion_tokens": figures.generated_tokens,
        "total_tokens": figures.prompt_tokens + figures.generated_tokens,
        "prompt_tokens_details": {"cached_tokens": figures.reused_tokens},
    }


class ReplyShape:
    """The envelope of one request's replies: ``text_completion`` or ``chat.completion`` objects."""

    def __init__(self, request_id: str, model: str, chat: bool) -> None:
        self.id = request_id
        self.model = model
        self.chat = chat
        self.created = int(time.time())

    def _envelope(self, kind: str, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": kind,
            "created": self.created,
            "model": self.model,
            "choices": choices,
        }

    def stream_event(self, delta: str, finish: str | None, first: bool) -> dict[str, Any]:
        """One SSE event carrying `delta` (and the finish reason on the last)."""
        if self.chat:
            content: dict[str, Any] = {"content": delta}
            if first:
                content["role"] = "assistant"
            choice = {"index": 0, "delta": content, "finish_reason": finish, "logprobs": None}
            return self._envelope("chat.completion.chunk", [choice])
        choice = {"index": 0, "text": delta, "finish_reason": finish, "logprobs": None}
        return self._envelope("text_completion", [choice])

    def usage_event(self, figures: pb.RequestFigures) -> dict[str, Any]:
        """The last SSE event when the client asked for ``stream_options.include_usage``."""
        kind = "chat.completion.chunk" if self.chat else "text_completion"
        return {**self._envelope(kind, []), "usage": usage(figures)}

    def whole(self, text: str, finish: str | None, figures: pb.RequestFigures) -> dict[str, Any]:
        """The reply of a request that did not ask to stream."""
        if self.chat:
            message = {"role": "assistant", "content": text}
            choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            return {**self._envelope("chat.completion", [choice]), "usage": usage(figures)}
        choice = {"index": 0, "text": text, "finish_reason": finish, "logprobs": None}
        return {**self._envelope("text_completion", [choice]), "usage": usage(figures)}


def infill_event(content: str, model: str, last: Any | None) -> dict[str, Any]:
    """A llama.cpp ``/infill`` reply (or stream event); `last` is the final chunk, with its figures."""
    event: dict[str, Any] = {"content": content, "stop": last is not None, "model": model}
    if last is not None:
        figures = last.figures
        event.update(
            tokens_predicted=figures.generated_tokens,
            tokens_evaluated=figures.prompt_tokens,
            tokens_cached=figures.reused_tokens,
            truncated=figures.truncated_tokens > 0,
            stop_type="limit" if last.finish_reason == pb.FINISH_REASON_LENGTH else "eos",
            timings={
                "prompt_n": figures.computed_tokens,
                "prompt_ms": figures.time_to_first_token_ms,
                "predicted_n": figures.generated_tokens,
                "predicted_ms": max(0.0, figures.total_ms - figures.time_to_first_token_ms),
                "predicted_per_second": figures.decode_tokens_per_second,
            },
        )
    return event
