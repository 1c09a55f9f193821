"""The flags of ``codedraft bench model`` (``bench/cursor_infill.py``): the model, the cursors per
corpus and their kinds, the prompt's window, the seed, and where the figures and the gate's
calibration go."""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.cursor_cases import CORPORA


def flags(description: str) -> argparse.ArgumentParser:
    """The command line of ``codedraft bench model``."""
    parser = argparse.ArgumentParser(prog="codedraft bench model", description=description)
    parser.add_argument(
        "--model",
        type=Path,
        default=None,
        help="model folder (Hugging Face layout) or GGUF file (default: the model `codedraft daemon` serves)",
    )
    parser.add_argument("--cases", type=int, default=100, help="cursor cases per corpus")
    parser.add_argument(
        "--corpora", default=",".join(CORPORA), help=f"comma-separated, of {', '.join(CORPORA)}"
    )
    parser.add_argument(
        "--context-tokens",
        type=int,
        default=0,
        help="the language server's local prompt of this many tokens, as sent where the full prompt is "
        "cold (completion.coldPromptMs; default 0: the full prompt's budgets for the model)",
    )
    parser.add_argument(
        "--index",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="index each corpus as a workspace and send the snippets the language server retrieves, as "
        "an editor with the default index.enabled asks (default); --no-index sends none",
    )
    parser.add_argument(
        "--naive-prompt",
        action="store_true",
        help="prompt with the file's text before the cursor only, as llama.cpp is given a raw prompt: no "
        "retrieved snippets (implies --no-index), no path header, no FIM tokens, the BOS only where the "
        "tokenizer adds one (bench/naive_prompt.py); still the language server's window and the daemon's "
        "request path",
    )
    parser.add_argument(
        "--block-cases",
        type=int,
        default=None,
        help="block cursors per corpus, each given the language server's token budget (default: --cases)",
    )
    parser.add_argument(
        "--inside-line-cases",
        type=int,
        default=0,
        help="cursors inside a line per corpus (bench/inside_line_cases.py): how many suggestions shown "
        "there are of several lines and exactly right (default 0: none)",
    )
    parser.add_argument("--max-new-tokens", type=int, default=32, help="per completion")
    parser.add_argument("--seed", type=int, default=0, help="seed of the case selection")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help="write the confidence gate's chosen point for this model into the language server's "
        "calibrations (lsp_server/completion/calibrations.json)",
    )
    parser.add_argument(
        "--calibrate-from",
        type=Path,
        nargs="+",
        default=None,
        metavar="JSON",
        help="run nothing: write the calibration from earlier runs' --json files of one model, their "
        "cursors pooled per corpus: the gate's point, and the later-lines point when they have block "
        "cursors (bench/confidence_curve.py)",
    )
    return parser
