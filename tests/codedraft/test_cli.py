"""The real ``codedraft`` entry point, run as a subprocess the way a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from codedraft import NAMES

CODEDRAFT = Path(sys.executable).parent / "codedraft"


def codedraft(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CODEDRAFT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def test_help_lists_every_subcommand() -> None:
    result = codedraft("--help")
    assert result.returncode == 0, result.stderr
    for name in ("daemon", "lsp", "index", "context", "complete", "fix", "bench"):
        assert f"    {name} " in result.stdout
    assert set(NAMES) == {"daemon", "lsp", "index", "context", "complete", "fix", "bench"}


def test_python_dash_m_codedraft_is_the_same_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "codedraft", "--help"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == codedraft("--help").stdout


@pytest.mark.parametrize("name", NAMES)
def test_each_subcommand_explains_its_flags(name: str) -> None:
    result = codedraft(name, "--help")
    assert result.returncode == 0, result.stderr
    assert f"usage: codedraft {name}" in result.stdout
    assert "--help" in result.stdout


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["daemon", "--kv-cache-mb", "-3"], "'-3'"),
        (["daemon", "--device", "tpu"], "'tpu'"),
        (["--log-level", "loud", "daemon"], "'loud'"),
        (["complete", "nofile.py"], "'nofile.py'"),
        (["complete", "a.py:0:3"], "'a.py:0:3'"),
    ],
)
def test_bad_flag_values_get_one_line_naming_them(argv: list[str], named: str) -> None:
    result = codedraft(*argv)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert named in lines[0]


def test_daemon_names_a_missing_model_in_one_line(tmp_path: Path) -> None:
    result = codedraft("daemon", "--model", str(tmp_path / "nowhere"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"codedraft: error: --model is missing: {tmp_path / 'nowhere'} is not a directory or a GGUF file"
    ]


def test_log_level_chooses_what_reaches_stderr() -> None:
    quiet = codedraft("fix", "x.py", "--check", "true")
    loud = codedraft("--log-level", "debug", "fix", "x.py", "--check", "true")
    assert "DEBUG codedraft: codedraft " not in quiet.stderr
    assert "DEBUG codedraft: codedraft " in loud.stderr
    assert loud.stdout == quiet.stdout == ""
