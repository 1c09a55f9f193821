"""Each language's fixture against its annotated snapshot of tags and chunks.

A snapshot line per tag: ``LINE:COL def|ref KIND NAME in SCOPE`` (0-based line, UTF-16 column), then
one per chunk: ``chunk START-END KIND NAME``. After a deliberate change to a query or the chunker,
regenerate with ``CODEDRAFT_UPDATE_SNAPSHOTS=1`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from indexer.analysis import analyze

FIXTURES = Path(__file__).parent / "fixtures" / "languages"
SAMPLES = sorted(path for path in FIXTURES.iterdir() if path.suffix != ".snapshot")


def render(path: Path) -> str:
    analysis = analyze(path.name, path.read_bytes())
    lines = [f"language {analysis.language}"]
    for tag in analysis.tags:
        role = "def" if tag.is_definition else "ref"
        scope = f" in {tag.scope}" if tag.scope else ""
        lines.append(f"{tag.line}:{tag.column} {role} {tag.kind} {tag.name}{scope}")
    for chunk in analysis.chunks:
        lines.append(f"chunk {chunk.start_line}-{chunk.end_line} {chunk.kind} {chunk.name}".rstrip())
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda path: path.name)
def test_sample_matches_snapshot(sample: Path) -> None:
    snapshot = sample.with_name(sample.name + ".snapshot")
    rendered = render(sample)
    if os.environ.get("CODEDRAFT_UPDATE_SNAPSHOTS"):
        snapshot.write_text(rendered, encoding="utf-8")
    assert rendered == snapshot.read_text(encoding="utf-8")


def test_every_language_in_the_table_has_a_fixture() -> None:
    from indexer.languages import LANGUAGES, language_for_path

    covered = {spec.name for path in SAMPLES if (spec := language_for_path(path)) is not None}
    assert covered == set(LANGUAGES)
