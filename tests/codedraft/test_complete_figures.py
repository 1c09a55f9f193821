"""`codedraft complete --json` reports only the daemon's own figures: a suggestion dropped after the
daemon answered carries them, and where the daemon was never asked they are null, never 0."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.codedraft.test_daemon_and_complete import CODEDRAFT
from tests.fixtures.scripted_model import make_scripted_checkpoint
from tests.inference.server.helpers import close_daemon, start_daemon

SOURCE = "# totals\ndef total_of(items):\n    total = sum()\n    return total\n"
INSIDE_A_LINE = "3:17"  # sum(|): a reply is not stopped at the line's end there
IN_A_COMMENT = "1:9"  # no suggestion is asked for in a comment
# The model's reply breaks the line it is written into (the filters drop it), and its third line,
# left of the cursor's indentation, ends the block before the reply does. Its tail is also the scripted
# model's chat script, so that each token has one successor (a line break follows the chat prompt).
REPLY = "pass\n    y\n x\n      zip out"
CHAT = " x\n      zip out"
# The daemon streams whole lines: after the prompt's pass and six more, it has sent the third line, and
# the engine then holds the request until the client stops it, so the block's end is always seen
# before the reply ends, as with a model slower than its client.
FREE_PASSES = 7


async def _codedraft(*args: str) -> dict[str, object]:
    process = await asyncio.create_subprocess_exec(
        str(CODEDRAFT), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()
    answer: dict[str, object] = json.loads(out)
    return answer


async def test_figures_are_the_daemons_or_null(tmp_path: Path, short_dir: Path) -> None:
    model = make_scripted_checkpoint(tmp_path / "scripted", completion=REPLY, chat=CHAT)
    source = tmp_path / "work" / "totals.py"
    source.parent.mkdir()
    source.write_text(SOURCE)
    running = await start_daemon(model, short_dir, held=True)
    address = str(running.address)
    try:
        running.arm(FREE_PASSES)
        dropped = await _codedraft("complete", f"{source}:{INSIDE_A_LINE}", "--daemon", address, "--json")
        in_comment = await _codedraft("complete", f"{source}:{IN_A_COMMENT}", "--daemon", address, "--json")
        stats = await running.client.stats()
    finally:
        await close_daemon(running)
    assert (dropped["completion"], dropped["reason"]) == (None, "filtered (prefer_parsable)"), dropped
    # The client stopped the request once the block had ended; the stream's last chunk still brought
    # the daemon's figures, which the suggestion keeps although the filters dropped its text.
    figures = dropped["figures"]
    assert isinstance(figures, dict), dropped
    assert dropped["finish_reason"] == "cancelled" and dropped["request_id"]
    assert figures["prompt_tokens"] == figures["computed_tokens"] > 0
    # the seven tokens the engine wrote freely, and the held pass's eighth if the stop came during it
    assert figures["generated_tokens"] == stats.generated_tokens in (FREE_PASSES, FREE_PASSES + 1)
    assert figures["time_to_first_token_ms"] > 0 and figures["total_ms"] > 0

    # No request went to the daemon: nothing it could have said is made up.
    assert in_comment["completion"] is None and in_comment["reason"]
    unknown = (in_comment["figures"], in_comment["finish_reason"], in_comment["request_id"])
    assert unknown == (None, None, None)
    assert stats.requests_total == 1
