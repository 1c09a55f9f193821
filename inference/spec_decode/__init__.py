"""Speculative decoding: proposers (prompt lookup, draft model), verification, and the k controller."""
