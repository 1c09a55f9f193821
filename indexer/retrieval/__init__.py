"""Retrievers that find the code a completion at a cursor needs, and their fusion into a token budget."""
