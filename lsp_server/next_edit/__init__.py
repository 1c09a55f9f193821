"""Next-edit suggestions: the user's recent edits, the editable region around the cursor, and the
predictions that need no model (renames propagated through the index)."""
