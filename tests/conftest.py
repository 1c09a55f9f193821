"""Fixtures shared by several test folders (registered once, so session-scoped ones run once)."""

from __future__ import annotations

from tests.fixtures.training_run import tiny_corpus, tiny_run

__all__ = ["tiny_corpus", "tiny_run"]
