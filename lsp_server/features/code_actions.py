"""``textDocument/codeAction``: "Refactor with codedraft…" on a selection and "Fix with codedraft" for
diagnostics in range; ``codeAction/resolve`` asks the model only when the user picks the fix."""

from __future__ import annotations

from lsprotocol import types

from lsp_server.edit_target import range_from_json, range_problem, range_to_json
from lsp_server.inline_edits import APPLY_TITLE, predicted_edits, workspace_edit
from lsp_server.proposed_edit import FIX_TITLE, REFACTOR_TITLE, propose_edit
from lsp_server.server import CodedraftServer


def setup(server: CodedraftServer) -> None:
    options = types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite],
        resolve_provider=True,
    )

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, options)
    async def code_actions(ls: CodedraftServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        document = ls.open_document(uri)
        if document is None or range_problem(params.range, len(document.lines)) is not None:
            return []
        actions: list[types.CodeAction] = []
        span = params.range
        if (span.start.line, span.start.character) == (span.end.line, span.end.character):
            ls.prefill.moved(uri, span.start)  # editors ask for code actions where the cursor rests
            actions.extend(await _predicted_edit(ls, uri, span.start, params.context.trigger_kind))
        else:
            target = {"uri": uri, "range": range_to_json(span)}
            actions.append(
                types.CodeAction(
                    title=REFACTOR_TITLE,
                    kind=types.CodeActionKind.RefactorRewrite,
                    command=types.Command(
                        title=REFACTOR_TITLE, command="codedraft.refactor", arguments=[target]
                    ),
                )
            )
        diagnostics = list(params.context.diagnostics)
        if diagnostics:
            first = min((d.range.start.line for d in diagnostics), default=span.start.line)
            last = max((d.range.end.line for d in diagnostics), default=span.end.line)
            fix_range = types.Range(
                start=types.Position(line=first, character=0), end=types.Position(line=last, character=0)
            )
            actions.append(
                types.CodeAction(
                    title=FIX_TITLE,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=diagnostics,
                    data={
                        "uri": uri,
                        "range": range_to_json(fix_range),
                        "diagnostics": [d.message for d in diagnostics],
                    },
                )
            )
        return actions

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def resolve(ls: CodedraftServer, action: types.CodeAction) -> types.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        if action.title != FIX_TITLE or "uri" not in data:
            return action
        messages = [str(m) for m in data.get("diagnostics", [])]
        span = range_from_json(data["range"])
        proposal = await propose_edit(ls, ls.settings.agent, data["uri"], span, messages, FIX_TITLE)
        edit, error = proposal.edit, proposal.error
        if edit is not None:
            action.edit = edit
        else:
            action.disabled = types.CodeActionDisabled(reason=error or "no fix")
        return action


async def _predicted_edit(
    ls: CodedraftServer, uri: str, cursor: types.Position, trigger: types.CodeActionTriggerKind | None
) -> list[types.CodeAction]:
    """The action "Apply predicted edit" for the prediction at the cursor, for editors that speak
    neither ``copilotInlineEdit`` nor inline completion (Helix, Emacs). Only when the user asked for code
    actions: an editor's automatic requests (VS Code's light bulb, which would repeat what its inline
    display shows) neither get it nor start a model call. The action carries no command: the
    server recognises its edit in the document's next change."""
    if trigger is types.CodeActionTriggerKind.Automatic:
        return []
    edits = await predicted_edits(ls, uri, cursor.line, cursor.character)
    if not edits:
        return []
    first = edits[0]
    return [
        types.CodeAction(
            title=APPLY_TITLE,
            kind=types.CodeActionKind.QuickFix,
            edit=workspace_edit(ls, first),
        )
    ]
