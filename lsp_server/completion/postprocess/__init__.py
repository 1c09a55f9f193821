"""Post-processing of model suggestions: small pure filters, one per module, run as a pipeline.

Each filter takes the cursor's :class:`~lsp_server.completion.postprocess.context.CursorContext` and
the suggestion text and returns the text to keep (possibly shorter) or ``None`` to drop it.
"""
