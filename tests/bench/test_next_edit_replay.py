"""bench next-edit's replay through a real ``codedraft lsp`` (the model off: renames come from the
index and need no daemon; the daemon address leads nowhere)."""

from __future__ import annotations

from pathlib import Path

from bench.next_edit.cases import Case, blocks_between
from bench.next_edit.command import language_server
from bench.next_edit.replay import Replayer
from bench.next_edit.scoring import rename_counts

BEFORE = "def area(width, height):\n    return width * height\n\n\nprint(area(2, 3) + 1)\n"
SETTINGS = {"nextEdit": {"enabled": True, "model": False}}


async def test_a_rename_is_offered_at_the_other_use_and_accepted_until_nothing_is_left(
    tmp_path: Path,
) -> None:
    after = BEFORE.replace("width", "w")
    case = Case(
        "rename-1", "c", "s", "geometry.py", "rename", BEFORE, blocks_between(BEFORE, after), ("width", "w")
    )
    one_block = BEFORE.replace("+ 1", "+ 2")
    silence = Case("silence-1", "c", "s", "g.py", "silence", BEFORE, blocks_between(BEFORE, one_block))
    async with language_server(tmp_path, f"unix:{tmp_path}/no-daemon.sock", SETTINGS) as client:
        replayer = Replayer(client, tmp_path, max_steps=3, max_chain=5)
        first, chain = await replayer.replay_rename(case)
        steps = await replayer.replay_blocks(silence)
    assert first.current == BEFORE.replace("width,", "w,")
    assert first.edits == 1
    assert first.predicted == after
    assert (chain.accepted, chain.final, chain.other_files) == (1, after, 0)
    assert rename_counts(chain.current, chain.final, chain.truth) == (1, 1, 1)
    assert len(chain.latencies_ms) == 1
    assert [(s.number, s.edits, s.predicted == s.current, s.truth == s.current) for s in steps] == [
        (1, 0, True, True)
    ]
    assert steps[0].figures == {"quiet": "next edit: no edit to predict"}
    assert not (tmp_path / "rename-1").exists()
