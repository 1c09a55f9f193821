"""Indexing a workspace of thousands of files: the editor sees ``$/progress`` (begin, files done of
total, end) and gets completions answered while the index is still being built."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types

from tests.e2e.lsp_harness import open_document, running_lsp

FILES = 3000


def _module(number: int) -> str:
    return "".join(
        f"def step_{number}_{k}(value):\n    total = value + {k}\n    return helper_{k % 7}(total)\n\n\n"
        for k in range(25)
    )


async def _reports(client: object, predicate: object, timeout: float) -> list[object]:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        reports = client.progress_reports.get("codedraft/index/1", [])  # type: ignore[attr-defined]
        if predicate(reports):  # type: ignore[operator]
            return list(reports)
        assert asyncio.get_running_loop().time() < deadline, f"no such progress within {timeout} s: {reports}"
        await asyncio.sleep(0.02)


async def test_progress_while_indexing_and_completions_meanwhile(
    tmp_path: Path, scripted_daemon: str
) -> None:
    workspace = tmp_path / "ws"
    for number in range(FILES):
        folder = workspace / f"pkg{number % 30}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod_{number}.py").write_text(_module(number), encoding="utf-8")
    async with running_lsp(
        workspace, tmp_path, "visual-studio-code", daemon_address=scripted_daemon
    ) as client:
        begun = await _reports(client, lambda reports: len(reports) > 0, 120)
        assert begun[0] == types.WorkDoneProgressBegin(
            title="codedraft: indexing ws", cancellable=False, percentage=0
        )
        uri = open_document(
            client, workspace / "calc.py", "def total_of(values):\n    total = sum(values)\n    \n"
        )
        result = await client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=2, character=4),
            )
        )
        answered_during = client.progress_reports["codedraft/index/1"]  # type: ignore[attr-defined]
        assert not any(isinstance(value, types.WorkDoneProgressEnd) for value in answered_during)
        assert isinstance(result, types.CompletionList)
        assert [item.label for item in result.items] == ["return total"]

        reports = await _reports(
            client, lambda values: isinstance(values[-1], types.WorkDoneProgressEnd), 600
        )
    middle = reports[1:-1]
    assert middle and all(isinstance(value, types.WorkDoneProgressReport) for value in middle)
    done = [int(value.message.split("/")[0]) for value in middle]  # type: ignore[union-attr]
    assert done == sorted(done)
    assert {value.message.split("/")[1] for value in middle} == {f"{FILES} files"}  # type: ignore[union-attr]
    assert middle[-1] == types.WorkDoneProgressReport(message=f"{FILES}/{FILES} files", percentage=100)
    assert reports[-1] == types.WorkDoneProgressEnd(message=f"{FILES} files indexed, 0 unchanged, 0 skipped")
