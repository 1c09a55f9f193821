"""Loading a GGUF model stays off torch's compiler stack: `normal_` or `arange` on the meta device
imports torch._dynamo, 3.5 s of the daemon's start on this CPU (a fresh process, since the test
session itself may have imported it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gguf import GGMLQuantizationType as Q

from tests.fixtures.tiny_gguf import write_gguf
from tests.fixtures.tiny_models import make_tiny_checkpoint

LOAD = """
import sys
from inference.loading import load_model
model = load_model(sys.argv[1], "cpu", weights="auto")
print(sorted(name for name in sys.modules if name.startswith("torch._dynamo"))[:3])
"""


def test_loading_a_gguf_model_does_not_import_the_compiler(tmp_path: Path) -> None:
    checkpoint = make_tiny_checkpoint(tmp_path / "gemma", "gemma3_text")
    write_gguf(checkpoint, tmp_path / "model.gguf", Q.Q8_0)
    done = subprocess.run(
        [sys.executable, "-c", LOAD, str(tmp_path / "model.gguf")],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[3],
    )
    assert done.stdout.strip() == "[]"
