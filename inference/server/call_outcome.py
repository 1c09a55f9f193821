"""How a call's engine request ended, and the gRPC status that says so (the servicer's bookkeeping)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import grpc

from inference.engine.errors import (
    EngineError,
    InvalidRequestError,
    ResourceExhaustedError,
    StepFailedError,
)
from inference.engine.sequence import FinishReason, RequestMetrics
from inference.server.live_requests import LiveRequest
from inference.server.validation import RequestError

log = logging.getLogger(__name__)


def error_status(error: BaseException) -> tuple[grpc.StatusCode, str]:
    """The gRPC status and message a person can act on for an engine or request error."""
    status = getattr(error, "grpc_status", None)  # a remote engine's failure names its own status
    if isinstance(status, grpc.StatusCode):
        return status, str(error)
    if isinstance(error, ResourceExhaustedError):
        return grpc.StatusCode.RESOURCE_EXHAUSTED, str(error)
    if isinstance(error, InvalidRequestError | RequestError):
        return grpc.StatusCode.INVALID_ARGUMENT, str(error)
    if isinstance(error, StepFailedError):
        return grpc.StatusCode.INTERNAL, str(error)
    return grpc.StatusCode.INTERNAL, f"internal error: {type(error).__name__}: {error}"


@dataclass
class CallOutcome:
    """How one call's engine request ended (filled in as the stream runs)."""

    ended: bool = False
    metrics: RequestMetrics | None = None
    finish: FinishReason | None = None
    failure: BaseException | None = None
    last_delta: str = ""
    first_token_ms: float | None = None


def final_status(live: LiveRequest, outcome: CallOutcome) -> tuple[grpc.StatusCode, str] | None:
    """The call's status after its last chunk: None (OK) unless it was stopped or failed."""
    if outcome.finish is FinishReason.CANCELLED:
        return live.stop_status or (grpc.StatusCode.CANCELLED, "cancelled by the engine")
    if outcome.finish is FinishReason.ERROR or outcome.finish is None:
        code, message = error_status(outcome.failure or EngineError("the engine ended the request early"))
        log.warning("request %s failed: %s", live.request_id, message)
        return code, message
    return None
