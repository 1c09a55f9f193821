"""codedraft inference."""
