"""codedraft lsp_server."""
