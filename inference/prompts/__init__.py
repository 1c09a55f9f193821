"""Prompt templates: fill-in-the-middle per model family, and chat templates."""
