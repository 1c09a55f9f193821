"""A tiny corpus (two stdlib packages) and one tiny end-to-end run of the recipe, shared by the tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from training.corpus import stdlib_root
from training.train_default import main as train_main

CORPUS_FILES = (
    "json/__init__.py",
    "json/decoder.py",
    "json/encoder.py",
    "json/scanner.py",
    "json/tool.py",
    "collections/abc.py",
    "collections/__init__.py",
    "textwrap.py",
    "fnmatch.py",
    "glob.py",
    "shlex.py",
    "colorsys.py",
)
HELD_OUT_PERCENT = 40


@pytest.fixture(scope="session")
def tiny_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    for rel in CORPUS_FILES:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(stdlib_root() / rel, root / rel)
    return root


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory: pytest.TempPathFactory, tiny_corpus: Path) -> Path:
    """The models directory written by a three-step run of the tiny recipe."""
    out = tmp_path_factory.mktemp("run")
    argv = [
        "--recipe",
        "tiny",
        "--corpus-root",
        str(tiny_corpus),
        "--out-dir",
        str(out / "models"),
        "--work-dir",
        str(out / "work"),
        "--held-out-percent",
        str(HELD_OUT_PERCENT),
        "--threads",
        "1",
    ]
    assert train_main(argv) == 0
    return out / "models"
