"""``textDocument/codeAction``, ``codeAction/resolve`` and the refactor/fix commands when the request or
the backend is bad: clear answers, nothing written, the server keeps serving."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from tests.e2e.lsp_harness import open_document, running_lsp


def span(start_line: int, start_char: int, end_line: int, end_char: int) -> types.Range:
    return types.Range(
        start=types.Position(line=start_line, character=start_char),
        end=types.Position(line=end_line, character=end_char),
    )


async def test_actions_are_offered_and_fail_cleanly_without_a_daemon(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    source = "def f(x):\n    return x +\n"
    (workspace / "a.py").write_text(source)
    async with running_lsp(workspace, tmp_path, daemon_address=f"unix:{tmp_path}/none.sock") as client:
        uri = open_document(client, workspace / "a.py", source)
        diagnostic = types.Diagnostic(range=span(1, 4, 1, 14), message="invalid syntax", source="python")
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=span(0, 0, 1, 14),
                context=types.CodeActionContext(diagnostics=[diagnostic]),
            )
        )
        titles = {action.title: action for action in actions or []}
        assert set(titles) == {"Refactor with codedraft…", "Fix with codedraft"}
        # lsprotocol reads a CodeAction that carries a command object back as a Command; the wire
        # message is a CodeAction of kind refactor.rewrite whose command is codedraft.refactor
        assert "codedraft.refactor" in str(titles["Refactor with codedraft…"].command)
        fix = titles["Fix with codedraft"]
        assert isinstance(fix, types.CodeAction) and fix.kind == types.CodeActionKind.QuickFix
        assert fix.edit is None  # computed lazily

        resolved = await client.code_action_resolve_async(fix)
        assert resolved.edit is None
        assert resolved.disabled is not None and "could not answer" in resolved.disabled.reason

        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="codedraft.refactor",
                arguments=[
                    {
                        "uri": uri,
                        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
                    }
                ],
            )
        )
        assert result["applied"] is False and "could not answer" in result["reason"]
        assert (workspace / "a.py").read_text() == source


async def test_bad_command_arguments_and_foreign_files_are_refused(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outside = tmp_path / "outside.py"
    outside.write_text("x = 1\n")
    async with running_lsp(workspace, tmp_path, daemon_address=f"unix:{tmp_path}/none.sock") as client:
        try:
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="codedraft.refactor", arguments=["nonsense"])
            )
        except Exception as error:
            assert "expected one argument" in str(error)
        else:
            raise AssertionError("a malformed argument must be an error response")

        uri = open_document(client, outside, "x = 1\n")
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="codedraft.fix",
                arguments=[
                    {
                        "uri": uri,
                        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}},
                    }
                ],
            )
        )
        assert result["applied"] is False and "outside the workspace" in result["reason"]
        status = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="codedraft.status", arguments=[])
        )
        assert status["state"] in {"degraded", "loading", "indexing"}
