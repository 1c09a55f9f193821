"""Completion: the prompt the language server sends and the filters its suggestions pass through."""
