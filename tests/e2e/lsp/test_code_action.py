"""``codeAction/resolve`` computes the fix's edit with the real daemon only when asked."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from tests.e2e.daemon_process import daemon_stats
from tests.e2e.lsp_harness import open_document, running_lsp

SOURCE = "def area(r):\n    result = pi * r * r\n    return result\n"


async def test_the_fix_is_computed_on_resolve(tmp_path: Path, scripted_daemon: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    no_prefill = {"completion": {"prefill": False}}  # the test counts the daemon's requests
    async with running_lsp(
        workspace, tmp_path, daemon_address=scripted_daemon, settings=no_prefill
    ) as client:
        uri = open_document(client, workspace / "geometry.py", SOURCE)
        diagnostic = types.Diagnostic(
            range=types.Range(
                start=types.Position(line=1, character=13), end=types.Position(line=1, character=15)
            ),
            message="undefined name 'pi'",
        )
        before = (await daemon_stats(scripted_daemon)).get("requests_total", 0)
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=diagnostic.range,
                context=types.CodeActionContext(diagnostics=[diagnostic]),
            )
        )
        (fix,) = [a for a in actions or [] if a.title == "Fix with codedraft"]
        assert (await daemon_stats(scripted_daemon)).get("requests_total", 0) == before  # lazy
        resolved = await client.code_action_resolve_async(fix)
        assert resolved.edit is not None and resolved.disabled is None
        (document_edit,) = resolved.edit.document_changes
        (edit,) = document_edit.edits
        assert edit.new_text == "    value = compute(items)"
        assert edit.range.start.line == 1 and edit.range.end.line == 1
        assert resolved.edit.change_annotations[edit.annotation_id].needs_confirmation is True
