"""Errors the engine reports; the daemon maps each class to one gRPC status code."""

from __future__ import annotations


class EngineError(Exception):
    """Base class of the engine's errors. The message is one line a person can act on."""


class ResourceExhaustedError(EngineError):
    """Not enough KV blocks or queue room for a request, even after evicting cached blocks.

    The daemon maps it to RESOURCE_EXHAUSTED; the engine keeps serving the other requests.
    """


class InvalidRequestError(EngineError, ValueError):
    """A request the engine cannot run as given (bad sampling value, empty or too long prompt).

    The daemon maps it to INVALID_ARGUMENT.
    """


class StepFailedError(EngineError):
    """A step raised something the engine does not expect (a bug, a device fault, a model that fails).

    The engine cannot tell what the failure left half-done, so every request in flight ends with this
    error (the daemon maps it to INTERNAL), their KV blocks are freed, and new requests are served.
    """

    @classmethod
    def caused_by(cls, error: BaseException) -> StepFailedError:
        """The one-line error every request in flight gets when a step raised `error`."""
        detail = str(error).strip().splitlines()[0] if str(error).strip() else "no message"
        return cls(
            f"the engine failed while running this request ({type(error).__name__}: {detail}); every "
            "request in flight was stopped and the daemon serves new ones: retry, and if it happens "
            "again report it with the daemon's log"
        )
