"""The real daemon of the end-to-end tests, serving the scripted model, for the agent's own."""

from tests.e2e.conftest import scripted_daemon

__all__ = ["scripted_daemon"]
