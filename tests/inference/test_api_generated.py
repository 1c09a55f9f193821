"""The committed gRPC code is what protoc makes of protos/, and the proto documents every field."""

from __future__ import annotations

import re
from pathlib import Path

from inference import protogen
from inference.api.codedraft.v1 import inference_pb2

PROTO = protogen.PROTO_ROOT / "codedraft" / "v1" / "inference.proto"
_FIELD = re.compile(r"^\s*(?:optional |repeated )?[A-Za-z_][\w.]*\s+\w+\s*=\s*\d+;")


def test_generated_code_is_current(tmp_path: Path) -> None:
    protogen.generate(tmp_path)
    fresh = {p.relative_to(tmp_path): p.read_bytes() for p in (tmp_path / "codedraft").rglob("*.py*")}
    committed_root = protogen.API_DIR
    committed = {
        p.relative_to(committed_root): p.read_bytes() for p in (committed_root / "codedraft").rglob("*.py*")
    }
    assert fresh.keys() == committed.keys(), "run `make proto`: generated files differ in name"
    stale = sorted(str(name) for name in fresh if fresh[name] != committed[name])
    assert not stale, f"run `make proto`: stale generated files {stale}"


def test_service_has_the_contracted_methods() -> None:
    service = inference_pb2.DESCRIPTOR.services_by_name["Inference"]
    assert service.full_name == "codedraft.v1.Inference"
    streaming = {m.name: m.server_streaming for m in service.methods}
    assert streaming == {
        "Complete": True,
        "Generate": True,
        "Prefill": False,
        "PredictEdit": False,
        "Cancel": False,
        "GetModelInfo": False,
        "GetStats": False,
    }


def test_every_field_and_value_is_commented() -> None:
    lines = PROTO.read_text().splitlines()
    undocumented = []
    for number, line in enumerate(lines):
        if not _FIELD.match(line) and not re.match(r"^\s*[A-Z][A-Z0-9_]+\s*=\s*\d+;", line):
            continue
        above = lines[number - 1].strip()
        if not above.startswith("//") and "//" not in line:
            undocumented.append(f"{number + 1}: {line.strip()}")
    assert not undocumented, "fields without a comment:\n" + "\n".join(undocumented)


def test_last_chunk_figures_round_trip() -> None:
    chunk = inference_pb2.CompleteChunk(
        request_id="r1",
        text_delta="x",
        done=True,
        finish_reason=inference_pb2.FINISH_REASON_EOS,
        figures=inference_pb2.RequestFigures(prompt_tokens=10, reused_tokens=8, computed_tokens=2),
    )
    parsed = inference_pb2.CompleteChunk.FromString(chunk.SerializeToString())
    assert parsed == chunk
    assert parsed.figures.computed_tokens == parsed.figures.prompt_tokens - parsed.figures.reused_tokens
