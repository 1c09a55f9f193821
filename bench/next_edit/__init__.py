"""``codedraft bench next-edit``: next-edit suggestions replayed from a real repository's history."""
