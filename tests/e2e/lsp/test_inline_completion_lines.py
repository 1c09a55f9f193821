"""One line or a block through a real language server and daemon: on the blank line under a signature
the server asks for a block and shows it; on a blank line between statements it asks the daemon to
stop at the first line end, so the daemon decodes nothing past it."""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer

from tests.e2e.daemon_process import daemon_stats, running_daemon
from tests.e2e.lsp_harness import inline_params, open_document, running_lsp
from tests.fixtures.scripted_model import make_scripted_checkpoint

SCRIPT = "total = 0\n    return result"  # no token twice: the scripted model is a bigram table
UNDER_SIGNATURE = "def total_of(values):\n    \n\nprint(1)\n"
BETWEEN_STATEMENTS = "def total_of(values):\n    count = len(values)\n    \n"


async def test_a_block_cursor_gets_the_block_and_a_line_cursor_its_first_line(tmp_path: Path) -> None:
    model = make_scripted_checkpoint(tmp_path / "model", completion=SCRIPT, chat="ok")
    tokenizer = Tokenizer.from_file(str(model / "tokenizer.json"))
    tokens = tokenizer.encode(SCRIPT).ids
    decoded = [tokenizer.decode(tokens[: i + 1]) for i in range(len(tokens))]
    through_line_end = next(i for i, text in enumerate(decoded) if "\n" in text) + 1
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # the gate off: whether the scripted model is sure enough of its lines is not the question here
    settings = {"completion": {"confidence": "off", "prefill": False}}
    with running_daemon(model, tmp_path / "run" / "d.sock", tmp_path / "daemon.log") as daemon:
        async with running_lsp(
            workspace, tmp_path, daemon_address=daemon.address, settings=settings
        ) as client:
            generated = [(await daemon_stats(daemon.address)).get("generated_tokens", 0)]
            block_uri = open_document(client, workspace / "block.py", UNDER_SIGNATURE)
            block = await client.text_document_inline_completion_async(inline_params(block_uri, 1, 4))
            assert [item.insert_text for item in block.items] == [SCRIPT]
            generated.append((await daemon_stats(daemon.address))["generated_tokens"])
            line_uri = open_document(client, workspace / "line.py", BETWEEN_STATEMENTS)
            line = await client.text_document_inline_completion_async(inline_params(line_uri, 2, 4))
            assert [item.insert_text for item in line.items] == ["total = 0"]
            generated.append((await daemon_stats(daemon.address))["generated_tokens"])
    # the block: the whole script and its end of text; the line: the script through its line end
    assert (generated[1] - generated[0], generated[2] - generated[1]) == (len(tokens) + 1, through_line_end)
