"""A completion request run the way ``codedraft bench model`` runs them: through the daemon's request
path (``prepare_complete``: the model's prompt layout, truncation, token healing) and its engine, in
process; with the language server's prompt budgets for the served model."""

from __future__ import annotations

from typing import Any


async def complete(served: Any, request: Any, request_id: str) -> tuple[str, Any]:
    """The text the engine writes for ``request`` and its last output (with the request's figures)."""
    from inference.server.prepare import prepare_complete

    prepared = prepare_complete(request, served)
    fitted, _ = prepared.fit()
    engine_request = prepared.engine_request(request_id, fitted)
    pieces, last = [], None
    async for output in served.backend.generate(engine_request):
        pieces.append(output.delta)
        last = output
    return "".join(pieces), last


def budgets(served: Any, settings: Any, context_tokens: int) -> Any:
    """The language server's budgets for this model, or those of its local prompt of
    ``context_tokens`` tokens (no snippets; see ``lsp_server.completion.cold_prompts``)."""
    from lsp_server.completion.budgets import fit_budgets
    from lsp_server.completion.cold_prompts import local_budgets
    from lsp_server.model_room import ModelRoom

    budgets = fit_budgets(settings, ModelRoom(served.context_length))
    return budgets if context_tokens <= 0 else local_budgets(budgets, context_tokens)


def editor_request(case: Any, session_id: str, snippets: Any, settings: Any, sizes: Any) -> Any:
    """The ``CompleteRequest`` the language server sends at ``case``'s cursor (a Python file of a
    corpus: ``case.prefix + case.suffix`` is the document, the cursor between them)."""
    from lsp_server.completion.request import complete_request

    return complete_request(
        session_id=session_id,
        text=case.prefix + case.suffix,
        offset=len(case.prefix),
        path=case.path,
        language="python",
        snippets=snippets,
        settings=settings,
        budgets=sizes,
    )
