"""Shared transformer layers: paged attention, rotary embeddings, RMSNorm, SwiGLU."""
