"""``codedraft index`` and ``codedraft context`` through their configure/run functions."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from codedraft import context, index
from codedraft.errors import CommandError

FILES = {
    "lib/maths.py": "def hypotenuse(a, b):\n    return (a * a + b * b) ** 0.5\n",
    "app.py": "from lib.maths import hypotenuse\n\n\ndef diagonal(w, h):\n    return hypotenuse(w, h)\n",
    "blob.py": "x = 1\0",
}


def run(module: object, argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    module.configure(parser)  # type: ignore[attr-defined]
    return module.run(parser.parse_args(argv))  # type: ignore[attr-defined]


def test_index_prints_what_it_did(
    tmp_path: Path, index_dir: Path, write_files: Callable, capsys: pytest.CaptureFixture[str]
) -> None:
    write_files(tmp_path / "ws", FILES)
    assert run(index, [str(tmp_path / "ws"), "--list-skipped"]) == 0
    out = capsys.readouterr().out
    assert "indexed 2 files (2 new, 0 changed), 0 unchanged, 0 deleted" in out
    assert "index: 2 files, 2 symbols, 3 chunks in " + str(index_dir) in out
    assert "skipped: 1 binary" in out and "  blob.py: binary" in out
    assert run(index, [str(tmp_path / "ws")]) == 0
    assert "indexed 0 files (0 new, 0 changed), 2 unchanged" in capsys.readouterr().out


def test_index_rejects_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match=r"not a folder: .*nowhere"):
        run(index, [str(tmp_path / "nowhere")])


def test_context_json_counts_from_one(
    tmp_path: Path, index_dir: Path, write_files: Callable, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "ws"
    write_files(root, FILES)
    run(index, [str(root)])
    capsys.readouterr()
    # Line 5, column 21 is just after "hypotenuse" in "    return hypotenuse(w, h)"; the workspace is
    # found as the nearest indexed folder.
    assert run(context, [f"{root / 'app.py'}:5:21", "--json"]) == 0
    snippets = json.loads(capsys.readouterr().out)
    assert snippets[0]["path"] == "lib/maths.py"
    assert (snippets[0]["start_line"], snippets[0]["end_line"]) == (1, 2)
    assert snippets[0]["sources"][0] == "definitions" and snippets[0]["text"] == FILES["lib/maths.py"]

    assert run(context, [f"{root / 'app.py'}:5:21", "--workspace", str(root)]) == 0
    assert "--- lib/maths.py:1-2  [definitions" in capsys.readouterr().out


def test_context_rejects_bad_positions(tmp_path: Path, index_dir: Path, write_files: Callable) -> None:
    write_files(tmp_path / "ws", FILES)
    target = tmp_path / "ws" / "app.py"
    with pytest.raises(CommandError, match="line 99 is past the end"):
        run(context, [f"{target}:99:1"])
    with pytest.raises(CommandError, match="column 80 is past the end of line 1"):
        run(context, [f"{target}:1:80"])
    with pytest.raises(CommandError, match="no such file"):
        run(context, [f"{tmp_path / 'missing.py'}:1:1"])
    with pytest.raises(CommandError, match="not inside the workspace"):
        run(context, [f"{target}:1:1", "--workspace", str(tmp_path / "elsewhere")])
