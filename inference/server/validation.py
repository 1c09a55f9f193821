"""Checks on incoming requests: every bad field becomes one INVALID_ARGUMENT line that names it.

The checks here need no model; `prompt_budget` does the ones that need the tokenizer (prompt length).
A request that is not valid protobuf (for example invalid UTF-8 in a string field) never reaches the
servicer as a message: `lenient_deserializer` turns it into an `UndecodableRequest` the servicer rejects.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.config import SamplingParams, SpecMode
from inference.reply_limits import RequestLimits

MAX_STOP_STRINGS = 16
MAX_STOP_BYTES = 256
MAX_ID_CHARS = 128
CHAT_ROLES = frozenset({"system", "user", "assistant"})

_SPEC_MODES: dict[int, SpecMode] = {
    pb.SPECULATION_MODE_UNSPECIFIED: SpecMode.AUTO,
    pb.SPECULATION_MODE_AUTO: SpecMode.AUTO,
    pb.SPECULATION_MODE_OFF: SpecMode.OFF,
    pb.SPECULATION_MODE_NGRAM: SpecMode.NGRAM,
    pb.SPECULATION_MODE_DRAFT: SpecMode.DRAFT,
}


class RequestError(ValueError):
    """A request field is out of range or malformed; the message names the field (INVALID_ARGUMENT)."""


@dataclass(frozen=True)
class UndecodableRequest:
    """What the servicer receives instead of a message whose bytes protobuf could not parse."""

    message_type: str
    reason: str


def lenient_deserializer(message_class: Any) -> Callable[[bytes], Any]:
    """A request deserializer that returns `UndecodableRequest` instead of raising.

    grpc answers a deserializer exception with INTERNAL; the caller's mistake deserves INVALID_ARGUMENT.
    """

    def deserialize(data: bytes) -> Any:
        try:
            return message_class.FromString(data)
        except Exception as error:  # protobuf's DecodeError, or anything upb raises on garbage
            return UndecodableRequest(message_class.DESCRIPTOR.full_name, str(error))

    return deserialize


def check_ids(request_id: str, session_id: str) -> None:
    """Ids are short printable strings (they end up in logs and in Cancel calls)."""
    for name, value in (("request_id", request_id), ("session_id", session_id)):
        if len(value) > MAX_ID_CHARS:
            raise RequestError(f"{name} is {len(value)} characters; at most {MAX_ID_CHARS} are allowed")
        if not value.isprintable():
            raise RequestError(f"{name} {value!r} contains unprintable characters")


def check_sampling(params: SamplingParams) -> SamplingParams:
    """``params`` checked by the ranges' one owner (`SamplingParams.validate`), for every face (gRPC,
    the OpenAI and /infill HTTP faces); RequestError names the field as ``sampling.FIELD``."""
    try:
        params.validate()
    except ValueError as error:
        raise RequestError(f"sampling.{error}") from None
    return params


def sampling_params(sampling: pb.SamplingParams, default_tokens: int) -> SamplingParams:
    """The engine's `SamplingParams` for a request's sampling message, with defaults filled in.

    `max_tokens` is what the request asked for; `PreparedRequest.fit` lowers it to the model's room.
    """
    stops = tuple(sampling.stop)
    if len(stops) > MAX_STOP_STRINGS:
        raise RequestError(f"sampling.stop has {len(stops)} strings; at most {MAX_STOP_STRINGS} are allowed")
    if any(len(stop.encode("utf-8")) > MAX_STOP_BYTES for stop in stops):
        raise RequestError(f"a sampling.stop string is longer than {MAX_STOP_BYTES} bytes")
    return check_sampling(
        SamplingParams(
            temperature=float(sampling.temperature),
            top_p=float(sampling.top_p) if sampling.top_p != 0 else 1.0,  # 0: unset
            seed=sampling.seed if sampling.HasField("seed") else None,
            max_tokens=sampling.max_tokens if sampling.HasField("max_tokens") else default_tokens,
            stop=stops,
        )
    )


def speculation_mode(value: int, limits: RequestLimits) -> SpecMode:
    """The engine's mode for a proto `SpeculationMode`; DRAFT needs a loaded draft model."""
    mode = _SPEC_MODES.get(value)
    if mode is None:
        known = ", ".join(pb.SpeculationMode.Name(v) for v in _SPEC_MODES)
        raise RequestError(f"unknown speculation mode {value}; expected one of {known}")
    if mode is SpecMode.DRAFT and not limits.has_draft_model:
        raise RequestError(
            "speculation is SPECULATION_MODE_DRAFT but this daemon has no draft model "
            "(start it with --draft-model, or use auto/ngram)"
        )
    return mode


def truncation_allowed(value: int) -> bool:
    """Whether the request lets the daemon cut a too-long prompt (False: reject it instead)."""
    if value in (pb.TRUNCATION_POLICY_UNSPECIFIED, pb.TRUNCATION_POLICY_KEEP_NEAR_CURSOR):
        return True
    if value == pb.TRUNCATION_POLICY_REJECT:
        return False
    raise RequestError(f"unknown truncation policy {value}; expected KEEP_NEAR_CURSOR or REJECT")


def check_complete(request: pb.CompleteRequest) -> None:
    """Checks of a Complete request that need no model."""
    check_ids(request.request_id, request.session_id)
    if not request.prefix and not request.suffix:
        raise RequestError("prefix and suffix are both empty: there is nothing to complete")
    for index, snippet in enumerate(request.snippets):
        if not math.isfinite(snippet.score):
            raise RequestError(f"snippets[{index}].score must be a finite number, got {snippet.score}")


def check_generate(request: pb.GenerateRequest) -> None:
    """Checks of a Generate request that need no model."""
    check_ids(request.request_id, request.session_id)
    which = request.WhichOneof("input")
    if which is None:
        raise RequestError("the request has neither chat nor prompt: set one of them")
    if which == "prompt":
        if not request.prompt:
            raise RequestError("prompt is empty")
        return
    messages = request.chat.messages
    if not messages:
        raise RequestError("chat has no messages")
    for index, message in enumerate(messages):
        if message.role not in CHAT_ROLES:
            raise RequestError(
                f"chat.messages[{index}].role is {message.role!r}; expected system, user or assistant"
            )
    if not any(message.content for message in messages):
        raise RequestError("every chat message is empty")


def check_predict_edit(request: pb.PredictEditRequest) -> None:
    """Checks of a PredictEdit request that need no model: a region to rewrite and a cursor inside it."""
    check_ids(request.request_id, request.session_id)
    if not request.region:
        raise RequestError("region is empty: send the editable region's lines (with their line ends)")
    if request.cursor > len(request.region):
        raise RequestError(
            f"cursor is {request.cursor} but the region has only {len(request.region)} characters "
            "(code points); the cursor must lie in the region"
        )
    for index, snippet in enumerate(request.snippets):
        if not math.isfinite(snippet.score):
            raise RequestError(f"snippets[{index}].score must be a finite number, got {snippet.score}")
