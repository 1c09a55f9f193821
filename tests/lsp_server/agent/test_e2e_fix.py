"""The agent loop end to end through the real daemon and the scripted model (its chat reply is
"value = compute(items)"), from the command line and through the language server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from tests.e2e.lsp_harness import open_document, running_lsp

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CODEDRAFT = str(Path(sys.executable).parent / "codedraft")
CALC = (
    "def compute(items):\n    return sum(items)\n\n\n"
    "def total(items):\n    value = compute(itemz)\n    return value\n"
)
FIXED = CALC.replace("compute(itemz)", "compute(items)")
CHECK = "python3 -c 'import calc; assert calc.total([1, 2]) == 3'"


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text(CALC)
    return root


def test_cli_prints_the_verified_diff(tmp_path: Path, scripted_daemon: str) -> None:
    root = workspace(tmp_path)
    result = subprocess.run(
        [CODEDRAFT, "fix", "calc.py:6", "--check", CHECK, "--daemon", scripted_daemon, "--steps", "2"],
        cwd=root, capture_output=True, text=True, timeout=120, env={**os.environ},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "-    value = compute(itemz)\n+    value = compute(items)\n" in result.stdout
    assert "verified fix after 1 attempt(s)" in result.stderr
    assert (root / "calc.py").read_text() == CALC


def test_cli_stderr_holds_only_codedraft_lines(tmp_path: Path, scripted_daemon: str) -> None:
    """No library writes to the terminal: the checks start while the gRPC client's threads run, and a
    forking start made gRPC print "fork_posix.cc ... skipping fork() handlers" once per check."""
    root = workspace(tmp_path)
    argv = [CODEDRAFT, "fix", "calc.py:6", "--check", CHECK, "--daemon", scripted_daemon, "--steps", "2"]
    result = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    prefixes = [
        next(
            (p for p in ("codedraft fix: ", "verified fix after ", "attempt 1: ") if line.startswith(p)), line
        )
        for line in lines
    ]
    assert sorted(set(prefixes)) == ["attempt 1: ", "codedraft fix: ", "verified fix after "], result.stderr
    assert len(lines) == 7, result.stderr


def test_cli_json_reports_each_failed_attempt(tmp_path: Path, scripted_daemon: str) -> None:
    root = workspace(tmp_path)
    argv = [CODEDRAFT, "fix", "calc.py", "--check", "exit 3", "--steps", "2", "--json"]
    result = subprocess.run(
        [*argv, "--daemon", scripted_daemon], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "no verified fix" and report["diff"] == ""
    assert report["baseline"]["exit_code"] == 3
    assert len(report["attempts"]) == 2
    for attempt in report["attempts"]:  # the whole file replaced by the model's one line: not even checked
        assert attempt["reply"] == "value = compute(items)"
        assert attempt["outcome"] == "rejected: calc.py: the proposal drops the definition of compute, total"
        assert attempt["check"] is None


def test_cli_names_a_bad_target_in_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [CODEDRAFT, "fix", "missing.py:3", "--check", "true"], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["codedraft: error: no such file: 'missing.py'"]


async def test_lsp_fix_command_proposes_only_a_verified_edit(tmp_path: Path, scripted_daemon: str) -> None:
    root = workspace(tmp_path)
    settings = {"agent": {"checkCommand": CHECK, "stepLimit": 2}}
    async with running_lsp(root, tmp_path, daemon_address=scripted_daemon, settings=settings) as client:
        uri = open_document(client, root / "calc.py", CALC)
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="codedraft.fix",
                arguments=[
                    {
                        "uri": uri,
                        "range": {"start": {"line": 5, "character": 0}, "end": {"line": 5, "character": 0}},
                    }
                ],
            )
        )
        assert isinstance(result, dict)
        assert result["applied"] is True and result["verified"] is True, result
        streamed = "".join(s["delta"] for s in client.streamed if s["id"] == result["id"])
        assert "value = compute(items)" in streamed and "step 1: the check passed" in streamed
        (params,) = client.applied_edits
        (document_edit,) = params.edit.document_changes or []
        assert isinstance(document_edit, types.TextDocumentEdit)
        (edit,) = document_edit.edits
        assert isinstance(edit, types.AnnotatedTextEdit)
        assert edit.new_text == "    value = compute(items)\n"
        assert (edit.range.start.line, edit.range.end.line) == (5, 6)
        assert params.edit.change_annotations is not None
        assert params.edit.change_annotations[edit.annotation_id].needs_confirmation is True
        assert (root / "calc.py").read_text() == CALC


async def test_lsp_fix_resolve_without_a_passing_fix_is_disabled(
    tmp_path: Path, scripted_daemon: str
) -> None:
    root = workspace(tmp_path)
    settings = {"agent": {"checkCommand": "python3 -c 'import calc; calc.nothing'", "stepLimit": 1}}
    async with running_lsp(root, tmp_path, daemon_address=scripted_daemon, settings=settings) as client:
        uri = open_document(client, root / "calc.py", CALC)
        diagnostic = types.Diagnostic(
            range=types.Range(
                start=types.Position(line=5, character=4), end=types.Position(line=5, character=9)
            ),
            message="undefined name 'itemz'",
        )
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=diagnostic.range,
                context=types.CodeActionContext(diagnostics=[diagnostic]),
            )
        )
        (fix,) = [
            a for a in actions or [] if isinstance(a, types.CodeAction) and a.title == "Fix with codedraft"
        ]
        resolved = await client.code_action_resolve_async(fix)
        assert resolved.edit is None and resolved.disabled is not None
        assert "no verified fix after 1 attempt(s)" in resolved.disabled.reason
        assert "attempt 1: the check failed" in resolved.disabled.reason


async def test_without_a_check_the_one_shot_fix_says_it_is_not_verified(
    tmp_path: Path, scripted_daemon: str
) -> None:
    root = workspace(tmp_path)
    async with running_lsp(root, tmp_path, daemon_address=scripted_daemon) as client:
        uri = open_document(client, root / "calc.py", CALC)
        span = {"start": {"line": 5, "character": 0}, "end": {"line": 5, "character": 0}}
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="codedraft.fix", arguments=[{"uri": uri, "range": span}])
        )
        assert isinstance(result, dict)
        assert result["applied"] is True and result["verified"] is False
        assert "not verified" in result["note"]
        assert not [s for s in client.streamed if "[codedraft] step" in s["delta"]]


def test_the_embedded_model_is_handled_cleanly(tmp_path: Path) -> None:
    """Through a daemon started for the call on the embedded model (3.9M parameters, far too small to
    fix anything; its replies vary with the prompt, which holds the check's output and so the
    workspace's path): each attempt ends with a reason, the loop with its verdict after both, and
    the workspace is untouched."""
    from inference.defaults import default_model_dir

    root = workspace(tmp_path)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path / "run")}
    (tmp_path / "run").mkdir(mode=0o700)
    result = subprocess.run(
        [CODEDRAFT, "fix", "calc.py:6", "--check", CHECK, "--steps", "2", "--json", "--model",
         str(default_model_dir())],
        cwd=root, capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "no verified fix" and report["diff"] == ""
    assert report["baseline"]["exit_code"] == 1
    assert len(report["attempts"]) == 2
    assert all(attempt["outcome"] for attempt in report["attempts"])
    assert (root / "calc.py").read_text() == CALC


def test_cli_takes_the_workspace_from_the_files_repository(tmp_path: Path, scripted_daemon: str) -> None:
    """Run from elsewhere, FILE's git repository is the workspace (not the current directory)."""
    root = workspace(tmp_path)
    (root / "pkg").mkdir()
    (root / "pkg" / "calc.py").write_text(CALC)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    check = "cd pkg && " + CHECK
    target = f"{root / 'pkg' / 'calc.py'}:6"
    argv = [CODEDRAFT, "fix", target, "--check", check, "--daemon", scripted_daemon, "--steps", "2", "--json"]
    result = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "verified"
    assert "--- a/pkg/calc.py" in report["diff"]
