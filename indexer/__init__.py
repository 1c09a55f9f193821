"""codedraft indexer."""
