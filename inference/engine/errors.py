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
