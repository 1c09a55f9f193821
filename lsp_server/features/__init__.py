"""The language server's features: each module's ``setup(server)`` registers its handlers."""
