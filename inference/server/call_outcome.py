"""How a call's engine request ended, and the `Failure` that says so (the request runner's bookkeeping)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from inference.call_status import Failure
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


def error_status(error: BaseException) -> tuple[Failure, str]:
    """The failure and message a person can act on for an engine or request error."""
    failure = getattr(error, "failure", None)  # a remote engine's error names its own failure
    if isinstance(failure, Failure):
        return failure, str(error)
    if isinstance(error, ResourceExhaustedError):
        return Failure.RESOURCE_EXHAUSTED, str(error)
    if isinstance(error, InvalidRequestError | RequestError):
        return Failure.INVALID_ARGUMENT, str(error)
    if isinstance(error, StepFailedError):
        return Failure.INTERNAL, str(error)
    return Failure.INTERNAL, f"internal error: {type(error).__name__}: {error}"


@dataclass
class CallOutcome:
    """How one call's engine request ended (filled in as the stream runs)."""

    ended: bool = False
    metrics: RequestMetrics | None = None
    finish: FinishReason | None = None
    failure: BaseException | None = None
    last_delta: str = ""
    first_token_ms: float | None = None


def final_status(live: LiveRequest, outcome: CallOutcome) -> tuple[Failure, str] | None:
    """How the call failed after its last chunk: None (it succeeded) unless it was stopped or failed."""
    if outcome.finish is FinishReason.CANCELLED:
        return live.stop_status or (Failure.CANCELLED, "cancelled by the engine")
    if outcome.finish is FinishReason.ERROR or outcome.finish is None:
        code, message = error_status(outcome.failure or EngineError("the engine ended the request early"))
        log.warning("request %s failed: %s", live.request_id, message)
        return code, message
    return None
