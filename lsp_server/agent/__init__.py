"""Agent-verified fixes: propose an edit, apply it to a scratch copy, check it in a sandbox, iterate."""
