"""JSON bodies of the OpenAI API and of llama.cpp's ``/infill`` as codedraft's proto requests.

Fields these APIs define that codedraft has no use for (``cache_prompt``, ``t_max_predict_ms``,
``logit_bias``…) are accepted and ignored, as llama.cpp and vLLM do; values codedraft cannot honour
(several choices, ``echo``) are refused with a message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.config import SamplingParams
from inference.server import validation
from inference.server.live_requests import request_id_for


class FaceRequestError(ValueError):
    """A body the face cannot serve; the message names the field."""


@dataclass
class FaceRequest:
    """A proto request and how the reply is shaped."""

    proto: pb.CompleteRequest | pb.GenerateRequest
    stream: bool
    include_usage: bool
    model: str


UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1


def _number(
    body: dict[str, Any], name: str, kind: type, minimum: float | None = None, maximum: int | None = None
) -> Any:
    value = body.get(name)
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (kind is int and not isinstance(value, int))
    ):
        raise FaceRequestError(
            f"'{name}' must be {'an integer' if kind is int else 'a number'}, got {value!r}"
        )
    if minimum is not None and value < minimum:
        raise FaceRequestError(f"'{name}' must be at least {minimum:g}, got {value!r}")
    if maximum is not None and value > maximum:
        raise FaceRequestError(f"'{name}' must be at most {maximum}, got {value!r}")
    return kind(value)


def _sampling(body: dict[str, Any], *token_fields: str) -> pb.SamplingParams:
    """The body's sampling fields, their ranges checked by the one validator every face uses
    (`validation.check_sampling`): here, because the proto cannot hold a negative max_tokens."""
    given: dict[str, Any] = {}
    if (temperature := _number(body, "temperature", float)) is not None:
        given["temperature"] = temperature
    if (top_p := _number(body, "top_p", float)) is not None and top_p != 0:  # 0: unset, as on gRPC
        given["top_p"] = top_p
    for name in token_fields:
        if name == "n_predict" and isinstance(body.get(name), int) and body[name] < 0:
            continue  # llama.cpp's -1: no limit of its own, so the daemon's default applies
        if (tokens := _number(body, name, int)) is not None:
            # what the wire holds; the daemon lowers any large value to its limit (reply_limits)
            given["max_tokens"] = min(tokens, UINT32_MAX)
            break
    try:
        validation.check_sampling(SamplingParams(**given))
    except validation.RequestError as error:
        raise FaceRequestError(str(error)) from None
    sampling = pb.SamplingParams(**given)
    if (seed := _number(body, "seed", int, 0, UINT64_MAX)) is not None:  # a uint64 on the wire
        sampling.seed = seed
    stop = body.get("stop")
    if isinstance(stop, str):
        stop = [stop]
    if stop is not None:
        if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
            raise FaceRequestError("'stop' must be a string or a list of strings")
        sampling.stop.extend(s for s in stop if s)
    return sampling


def _common(body: Any) -> tuple[dict[str, Any], bool, bool]:
    if not isinstance(body, dict):
        raise FaceRequestError("the body must be a JSON object")
    if body.get("n", 1) not in (1, None):
        raise FaceRequestError("'n' must be 1: codedraft returns one choice per request")
    stream = body.get("stream") or False
    if not isinstance(stream, bool):
        raise FaceRequestError(f"'stream' must be true or false, got {stream!r}")
    options = body.get("stream_options") or {}
    if not isinstance(options, dict):
        raise FaceRequestError(f"'stream_options' must be an object, got {options!r}")
    include_usage = bool(options.get("include_usage"))
    return body, stream, include_usage


def _ids(body: dict[str, Any]) -> tuple[str, str]:
    user = body.get("user")
    return request_id_for("", "http-"), user if isinstance(user, str) else ""


def _prompt_text(prompt: Any, detokenize: Callable[[Sequence[int]], str]) -> str:
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str | list):
        prompt = prompt[0]
    if isinstance(prompt, str):
        return prompt
    if (
        isinstance(prompt, list)
        and prompt
        and all(isinstance(t, int) and not isinstance(t, bool) for t in prompt)
    ):
        return detokenize(prompt)
    raise FaceRequestError("'prompt' must be a string, or a list of token ids (one prompt per request)")


def completions_request(body: Any, detokenize: Callable[[Sequence[int]], str]) -> FaceRequest:
    """``/v1/completions``: a raw prompt (Generate), or with ``suffix`` a fill-in-the-middle (Complete)."""
    body, stream, include_usage = _common(body)
    if body.get("echo"):
        raise FaceRequestError("'echo' is not supported")
    prompt = _prompt_text(body.get("prompt"), detokenize)
    request_id, session = _ids(body)
    sampling = _sampling(body, "max_tokens")
    suffix = body.get("suffix")
    if suffix is not None and not isinstance(suffix, str):
        raise FaceRequestError(f"'suffix' must be a string, got {suffix!r}")
    proto: pb.CompleteRequest | pb.GenerateRequest
    if isinstance(suffix, str):
        proto = pb.CompleteRequest(
            request_id=request_id, session_id=session, prefix=prompt, suffix=suffix, sampling=sampling
        )
    else:
        proto = pb.GenerateRequest(
            request_id=request_id, session_id=session, prompt=prompt, sampling=sampling
        )
    return FaceRequest(proto, stream, include_usage, str(body.get("model") or ""))


def _content(value: Any, index: int) -> str:
    """A message's content: a string, or OpenAI's list of text parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [p.get("text", "") for p in value if isinstance(p, dict) and p.get("type") == "text"]
        if len(parts) == len(value):
            return "".join(str(p) for p in parts)
    raise FaceRequestError(f"messages[{index}].content must be a string or a list of text parts")


def chat_request(body: Any) -> FaceRequest:
    """``/v1/chat/completions``: the messages through the model's chat template (Generate)."""
    body, stream, include_usage = _common(body)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise FaceRequestError("'messages' must be a non-empty list")
    chat = pb.ChatMessages()
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise FaceRequestError(f"messages[{index}] must be an object")
        role = "system" if message.get("role") == "developer" else str(message.get("role", ""))
        chat.messages.add(role=role, content=_content(message.get("content", ""), index))
    request_id, session = _ids(body)
    sampling = _sampling(body, "max_completion_tokens", "max_tokens")
    proto = pb.GenerateRequest(request_id=request_id, session_id=session, chat=chat, sampling=sampling)
    return FaceRequest(proto, stream, include_usage, str(body.get("model") or ""))


def infill_request(body: Any) -> FaceRequest:
    """llama.cpp's ``/infill`` as llama.vscode sends it: the cursor's surroundings and retrieved files.

    ``input_prefix`` holds the lines above the cursor and ``prompt`` the current line up to it (so the
    prefix is their concatenation), ``input_extra`` the retrieved chunks as ``[{filename, text}]``.
    """
    body, stream, _ = _common(body)
    fields = {}
    for name in ("input_prefix", "input_suffix", "prompt"):
        value = body.get(name, "")
        if not isinstance(value, str):
            raise FaceRequestError(f"'{name}' must be a string")
        fields[name] = value
    extra = body.get("input_extra") or []
    if not isinstance(extra, list):
        raise FaceRequestError("'input_extra' must be a list of {filename, text} objects")
    snippets = []
    for index, chunk in enumerate(extra):
        if not isinstance(chunk, dict) or not isinstance(chunk.get("text", ""), str):
            raise FaceRequestError(f"input_extra[{index}] must be an object with a string 'text'")
        snippets.append(pb.ContextSnippet(path=str(chunk.get("filename") or ""), text=chunk.get("text", "")))
    request_id, session = _ids(body)
    sampling = _sampling(body, "n_predict", "max_tokens")
    proto = pb.CompleteRequest(
        request_id=request_id,
        session_id=session,
        prefix=fields["input_prefix"] + fields["prompt"],
        suffix=fields["input_suffix"],
        snippets=snippets,
        sampling=sampling,
    )
    return FaceRequest(proto, stream, False, str(body.get("model") or ""))
