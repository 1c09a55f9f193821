"""``codedraft daemon``: serve the inference engine over gRPC."""

from __future__ import annotations

import argparse
from pathlib import Path

from inference.defaults import default_draft_model_dir, default_model_dir, default_socket_path
from lsp_server.subcommands.errors import CommandError, not_implemented_yet
from lsp_server.subcommands.values import positive_int

HELP = "run the inference daemon (gRPC) on a model; the embedded default model unless --model says"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        type=Path,
        default=None,
        help=f"target model directory in the Hugging Face layout (default: {default_model_dir()})",
    )
    parser.add_argument(
        "--draft-model",
        type=Path,
        default=None,
        help="draft model directory sharing the target's tokenizer, for speculative decoding "
        f"(default with the embedded model: {default_draft_model_dir()})",
    )
    parser.add_argument("--no-draft", action="store_true", help="load no draft model")
    parser.add_argument(
        "--listen",
        default=None,
        help=f"unix:PATH or tcp:HOST:PORT (default: unix:{default_socket_path()}); TCP on anything but "
        "loopback needs --token-file",
    )
    parser.add_argument(
        "--token-file",
        type=Path,
        default=None,
        help="file holding the token every call must carry (metadata 'authorization: Bearer TOKEN')",
    )
    parser.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda"),
        default="auto",
        help="where the model runs (default: auto, CUDA when available); float32 on CPU, bfloat16 on CUDA",
    )
    parser.add_argument(
        "--kv-cache-mb",
        type=positive_int,
        default=512,
        help="memory for the paged KV pool in MB (default: 512)",
    )


def resolve_model_dirs(args: argparse.Namespace) -> tuple[Path, Path | None]:
    """The target and draft model folders the flags name, checked to exist."""
    model = args.model or default_model_dir()
    if not model.is_dir():
        if args.model is None:
            raise CommandError(
                f"the embedded default model is missing: {model} is not a directory (it arrives with issue 5)"
            )
        raise CommandError(f"--model is missing: {model} is not a directory")
    draft: Path | None = None
    if not args.no_draft:
        draft = args.draft_model or (default_draft_model_dir() if args.model is None else None)
        if draft is not None and not draft.is_dir():
            raise CommandError(f"--draft-model is missing: {draft} is not a directory")
    return model, draft


def run(args: argparse.Namespace) -> int:
    resolve_model_dirs(args)
    raise not_implemented_yet("daemon", 4, "the gRPC inference daemon")
