"""codedraft bench."""
