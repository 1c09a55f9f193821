"""Refactors and fixes: a prompt for the model, its streamed reply, and the edit the user confirms."""
