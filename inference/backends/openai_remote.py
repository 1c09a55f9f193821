"""`OpenAIRemoteBackend`: the servicer's `InferenceBackend` served by a remote OpenAI-compatible engine.

A completion (and a Generate with a raw prompt) is a streamed ``/v1/completions`` call with the prompt
the servicer built for the model family (FIM layout, retrieved snippets); a chat Generate is a streamed
``/v1/chat/completions`` call with the messages, rendered by the engine's own chat template. The
prompt goes as text by default: every engine accepts text, and the text is what the codedraft
tokenizer decodes the prompt's ids to, with special tokens in user text already escaped; ``tokens``
sends the ids themselves (vLLM, llama.cpp's own server), so the engine sees exactly the same tokens.

Stopping a request closes its HTTP stream, which is how vLLM and llama.cpp learn to stop decoding:
`abort` (Cancel, a newer completion of the session, shutdown) closes it from outside, and a caller
that leaves the iterator early (a deadline, a client that went away) closes it on the way out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Callable
from typing import Any, Literal

import aiohttp

from inference.backends.openai_stream import OpenAIEndpoint, RemoteEngineError, sse_events
from inference.backends.protocol import BackendStats
from inference.call_status import Failure
from inference.config import SamplingParams
from inference.engine.sequence import FinishReason, Request, RequestMetrics, RequestOutput
from inference.engine.text_stream import RuledText
from inference.tokenizer import Tokenizer

log = logging.getLogger(__name__)

PromptFormat = Literal["text", "tokens"]

_FINISH = {"stop": FinishReason.STOP, "length": FinishReason.LENGTH, "eos": FinishReason.EOS}


def sampling_body(sampling: SamplingParams) -> dict[str, Any]:
    """The OpenAI request fields for codedraft's sampling settings."""
    body: dict[str, Any] = {
        "max_tokens": sampling.max_tokens,
        "temperature": sampling.temperature,
        "top_p": sampling.top_p,
    }
    if sampling.seed is not None:
        body["seed"] = sampling.seed
    if sampling.stop:
        body["stop"] = list(sampling.stop)
    if sampling.stop_token_ids:
        # A vLLM extension (FIM end tokens); engines without it ignore unknown fields.
        body["stop_token_ids"] = list(sampling.stop_token_ids)
    return body


def _metrics(
    usage: dict[str, Any] | None, request: Request, generated: int, times: list[float]
) -> RequestMetrics:
    """Figures from the engine's `usage` (cached prompt tokens where reported), else counted here."""
    prompt = len(request.prompt_token_ids or ())
    cached = 0
    if usage:
        prompt = int(usage.get("prompt_tokens") or prompt)
        generated = int(usage.get("completion_tokens") or generated)
        details = usage.get("prompt_tokens_details") or {}
        cached = int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0
    metrics = RequestMetrics(
        prompt_tokens=prompt,
        reused_tokens=cached,
        computed_tokens=max(0, prompt - cached),
        generated_tokens=generated,
    )
    start, first, last = times[0], times[1] if len(times) > 1 else None, times[-1]
    if first is not None:
        metrics.time_to_first_token = first - start
        if generated > 1 and last > first:
            metrics.decode_tokens_per_s = (generated - 1) / (last - first)
    return metrics


class OpenAIRemoteBackend:
    """Sends each request to a remote engine and streams its text back as `RequestOutput`s.

    Invariant: `_closers[id]` stops request `id`'s HTTP exchange (cancels the pending POST, later closes
    the response) while its `generate` iterator is open; `_aborted` holds the ids stopped that way.
    """

    def __init__(
        self,
        endpoint: OpenAIEndpoint,
        model: str,
        tokenizer: Tokenizer,
        prompt_format: PromptFormat = "text",
    ) -> None:
        self.endpoint = endpoint
        self.model = model
        self.tokenizer = tokenizer
        self.prompt_format = prompt_format
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closers: dict[str, Callable[[], Any]] = {}
        self._aborted: set[str] = set()

    def request_body(self, request: Request) -> tuple[str, dict[str, Any]]:
        """The path and JSON body of the engine call for `request`."""
        body: dict[str, Any] = {
            "model": self.model,
            "stream": True,
            "stream_options": {"include_usage": True},
            **sampling_body(request.sampling),
        }
        if request.chat_messages is not None:
            body["messages"] = list(request.chat_messages)
            return "/chat/completions", body
        ids = list(request.prompt_token_ids or ())
        if self.prompt_format == "tokens":
            body["prompt"] = ids
        else:
            body["prompt"] = request.prompt if request.prompt is not None else self.tokenizer.decode(ids)
        return "/completions", body

    async def generate(self, request: Request) -> AsyncGenerator[RequestOutput, None]:
        """The request's text as the engine streams it, then a finished output with its figures."""
        self._loop = asyncio.get_running_loop()
        request_id = request.request_id
        path, body = self.request_body(request)
        times = [time.perf_counter()]
        generated = 0
        usage: dict[str, Any] | None = None
        finish: FinishReason | None = None
        posting = asyncio.ensure_future(self.endpoint.open_stream(path, body))
        self._closers[request_id] = posting.cancel
        reply: aiohttp.ClientResponse | None = None
        try:
            try:
                reply = await posting
            except asyncio.CancelledError:
                if request_id not in self._aborted or _cancelling():
                    raise
            if reply is not None and request_id not in self._aborted:
                self._closers[request_id] = reply.close
                ruled = RuledText(request.text_rule)
                async for event in sse_events(reply):
                    usage = event.get("usage") or usage
                    for choice in event.get("choices") or ():
                        delta = _choice_text(choice)
                        if choice.get("finish_reason"):
                            finish = _FINISH.get(str(choice["finish_reason"]), FinishReason.STOP)
                        if delta:
                            ids = self.tokenizer.encode(delta)
                            generated += len(ids)
                            times.append(time.perf_counter())
                            yield RequestOutput(request_id, ruled.push(delta), ids, False, RequestMetrics())
                    if ruled.stopped:  # closing the stream (finally, below) stops the engine
                        finish = FinishReason.STOP
                        break
            if request_id in self._aborted:
                finish = FinishReason.CANCELLED
            elif finish is None:
                raise RemoteEngineError(
                    Failure.UNAVAILABLE,
                    f"the engine at {self.endpoint.shown} ended the stream without a finish reason",
                )
        except (aiohttp.ClientError, OSError) as error:
            if request_id not in self._aborted:
                raise RemoteEngineError(
                    Failure.UNAVAILABLE,
                    f"lost the stream from the engine at {self.endpoint.shown}: {error}",
                ) from None
            finish = FinishReason.CANCELLED
        finally:
            self._closers.pop(request_id, None)
            self._aborted.discard(request_id)
            if reply is not None:
                reply.close()  # a stream left early must not go back to the pool half read
            elif not posting.done():
                posting.cancel()
        metrics = _metrics(usage, request, generated, times)
        metrics.finish_reason = finish
        yield RequestOutput(request_id, "", [], True, metrics, finish_reason=finish)

    def abort(self, request_id: str) -> bool:
        """Close the request's HTTP exchange (from any thread); True when it was still open."""
        closer = self._closers.get(request_id)
        if closer is None:
            return False
        self._aborted.add(request_id)
        if self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nothing left to stop
                self._loop.call_soon_threadsafe(closer)
        return True

    def stats(self) -> BackendStats:
        # The remote engine's KV pool is its own; only the requests in flight are known here.
        return BackendStats(0, 0, 0, running=len(self._closers), waiting=0, preemptions=0, kv_evictions=0)

    async def close(self) -> None:
        await self.endpoint.close()


def _choice_text(choice: dict[str, Any]) -> str:
    """The new text of one streamed choice: ``text`` (completions) or ``delta.content`` (chat)."""
    if "text" in choice:
        return str(choice.get("text") or "")
    delta = choice.get("delta") or {}
    return str(delta.get("content") or "") if isinstance(delta, dict) else ""


def _cancelling() -> bool:
    """True when this task itself is being cancelled (not just the POST it awaited)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
