"""The daemon's flags for serving beyond one machine: a remote engine behind it, an HTTP face in
front of it, and TLS on its listeners. Parsed and checked here, before anything heavy loads."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from inference.daemon_launcher import TokenFileError, read_token_file
from inference.server.address import AddressError, DaemonAddress, parse_address
from inference.server.tls import ServerTls, TlsError, client_ssl_context

BACKEND_SCHEME = "openai:"


class OptionError(ValueError):
    """A flag value the daemon cannot use; the message names the flag."""


@dataclass(frozen=True)
class RemoteBackendOptions:
    """``--backend openai:URL`` and what goes with it."""

    base_url: str
    model: str
    tokenizer_path: Path
    api_key: str | None
    context_length: int | None
    prompt_format: str
    ca: Path | None


@dataclass(frozen=True)
class NetworkOptions:
    """What the daemon serves from and where else it listens."""

    remote: RemoteBackendOptions | None
    http: DaemonAddress | None
    tls: ServerTls | None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of this module, added to ``codedraft daemon``."""
    parser.add_argument(
        "--weights",
        choices=("auto", "float32", "float16", "q4_1", "q4_1_q8", "native", "native_q8", "q8_0"),
        default="auto",
        help="how the model's projections are stored on the CPU: float32 (the checkpoint's values), "
        "float16 (fbgemm's fp16-weight kernel: half the bytes read per token), q4_1 (GGUF's 32-weight "
        "blocks, Q4_1 or Q8_0, read by codedraft's own kernels, compiled on first use; activations and "
        "sums stay float32) or q4_1_q8 (the same blocks, the Q4_1 products with activations quantized to 8 "
        "bits per 32-block and integer dot products, as llama.cpp: several rows cost much less; outputs "
        "differ from q4_1's) or native (a GGUF file's own blocks, Q4_0 to Q8_0 and Q4_K / Q5_K / Q6_K, read "
        "in place from the memory-mapped file; float32 activations) or native_q8 (the same blocks times "
        "activations quantized to 8 bits, as llama.cpp: faster, outputs differ from native's) or q8_0 (a "
        "float checkpoint quantized at load to Q8_0 blocks, read by the native kernels) (default: auto: "
        "q4_1 for a GGUF stored in Q4_1 (Q8_0 where Q4_1 is not exact), whose weights it holds exactly, "
        "native_q8 for any other quantized GGUF, Q8_0 included, else float16; see docs/benchmarks.md and "
        "docs/models.md)",
    )
    group = parser.add_argument_group("remote engine and network")
    group.add_argument(
        "--backend",
        default=None,
        help="serve from a remote OpenAI-compatible engine instead of loading a model: openai:URL "
        "(e.g. openai:http://gpu-box:8000/v1 for vLLM or llama.cpp's server)",
    )
    group.add_argument(
        "--backend-model", default=None, help="the model name the engine serves (needed with --backend)"
    )
    group.add_argument(
        "--backend-tokenizer",
        type=Path,
        default=None,
        help="the served model's tokenizer: a Hugging Face folder with tokenizer.json, or its GGUF file "
        "(needed with --backend: codedraft builds the FIM prompt and fits the context itself)",
    )
    group.add_argument(
        "--backend-context",
        type=int,
        default=None,
        help="the engine's context length in tokens (default: what its /v1/models reports, else 4096)",
    )
    group.add_argument(
        "--backend-prompt",
        choices=("text", "tokens"),
        default="text",
        help="send completion prompts as text (any engine) or as token ids (vLLM, llama.cpp's own server: "
        "the engine then sees exactly codedraft's tokens) (default: text)",
    )
    group.add_argument(
        "--api-key-file",
        type=Path,
        default=None,
        help="file holding the engine's API key (sent as a bearer token)",
    )
    group.add_argument(
        "--backend-ca",
        type=Path,
        default=None,
        help="CA bundle to trust for an https engine (default: the system store)",
    )
    group.add_argument(
        "--http",
        default=None,
        help="also serve the OpenAI API (/v1/completions, /v1/chat/completions, /v1/models) and llama.cpp's "
        "/infill on tcp:HOST:PORT; same token and TLS rules as --listen",
    )
    group.add_argument(
        "--tls-cert", type=Path, default=None, help="PEM certificate chain for TLS on both listeners"
    )
    group.add_argument("--tls-key", type=Path, default=None, help="PEM private key of --tls-cert")


def _remote(args: argparse.Namespace) -> RemoteBackendOptions | None:
    if args.backend is None:
        for flag in ("backend_model", "backend_tokenizer", "api_key_file", "backend_context"):
            if getattr(args, flag) is not None:
                raise OptionError(f"--{flag.replace('_', '-')} needs --backend openai:URL")
        return None
    if not args.backend.startswith(BACKEND_SCHEME) or "://" not in args.backend:
        raise OptionError(
            f"--backend must be openai:URL (e.g. openai:http://127.0.0.1:8000/v1), got {args.backend!r}"
        )
    url = args.backend[len(BACKEND_SCHEME) :]
    if not url.startswith(("http://", "https://")):
        raise OptionError(f"--backend URL must start with http:// or https://, got {url!r}")
    if not args.backend_model:
        raise OptionError("--backend needs --backend-model NAME (the model name the engine serves)")
    tokenizer = args.backend_tokenizer
    if tokenizer is None or not (tokenizer.is_file() or (tokenizer / "tokenizer.json").is_file()):
        raise OptionError(
            "--backend needs --backend-tokenizer DIR|FILE.gguf, a folder with the served model's "
            "tokenizer.json or its GGUF file"
            + (f" ({tokenizer} is neither)" if tokenizer is not None else "")
        )
    if args.backend_context is not None and args.backend_context < 2:
        raise OptionError(f"--backend-context must be at least 2, got {args.backend_context}")
    key = None
    if args.api_key_file is not None:
        try:
            key = read_token_file(args.api_key_file)
        except TokenFileError as error:
            raise OptionError(f"--api-key-file: {error}") from None
    return RemoteBackendOptions(
        url,
        args.backend_model,
        args.backend_tokenizer,
        key,
        args.backend_context,
        args.backend_prompt,
        args.backend_ca,
    )


def resolve(args: argparse.Namespace) -> NetworkOptions:
    """Check the flags of this module; OptionError names the first bad one."""
    remote = _remote(args)
    http = None
    if args.http is not None:
        try:
            http = parse_address(args.http)
        except AddressError as error:
            raise OptionError(f"--http: {error}") from None
        if http.is_unix:
            raise OptionError(f"--http needs tcp:HOST:PORT, got {args.http!r}")
    if (args.tls_cert is None) != (args.tls_key is None):
        raise OptionError("--tls-cert and --tls-key go together")
    tls = None
    if args.tls_cert is not None:
        try:
            tls = ServerTls.load(args.tls_cert, args.tls_key)
        except TlsError as error:
            raise OptionError(str(error)) from None
    if remote is not None and remote.ca is not None:
        try:
            client_ssl_context(remote.ca)
        except (TlsError, OSError) as error:
            raise OptionError(f"--backend-ca: {error}") from None
    return NetworkOptions(remote, http, tls)
