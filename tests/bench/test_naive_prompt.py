"""`codedraft bench model --naive-prompt`: the file's text before the cursor as llama.cpp is given it,
through the daemon's request path, whatever the model's own prompt format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench import cursor_infill
from bench.naive_prompt import llamacpp_start, naive_served
from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.served_model import ServedModel
from inference.prompts.fim import fim_template_for
from inference.prompts.prefix_only import document_start
from inference.reply_limits import RequestLimits
from inference.server.prepare import prepare_complete
from inference.tokenizer import Tokenizer
from tests.fixtures.tiny_models import make_tiny_checkpoint, write_tokenizer

PREFIX = "def area(width, height):\n    "
SUFFIX = "\n\nprint(area(2, 3))\n"


def _tokenizer(directory: Path, **config: Any) -> Tokenizer:
    return Tokenizer.from_dir(write_tokenizer(directory, **config))


def _served(tokenizer: Tokenizer) -> ServedModel:
    limits = RequestLimits(512, 64, 32, 64, False, 64)
    none: Any = None  # the prompt is built without an engine or a next-edit format
    fim = fim_template_for(tokenizer)
    return ServedModel(none, tokenizer, fim, None, 512, limits, pb.ModelInfo(), none)


def _prompt(served: ServedModel, healing: bool, snippets: bool = True) -> str:
    request = pb.CompleteRequest(
        session_id="s",
        prefix=PREFIX,
        suffix=SUFFIX,
        path="src/shapes.py",
        language="python",
        snippets=[pb.ContextSnippet(path="src/units.py", text="METRE = 1.0\n", score=1.0)][: int(snippets)],
        token_healing=healing,
    )
    fitted, _ = prepare_complete(request, served).fit()
    return served.tokenizer.decode(fitted.token_ids) + fitted.healing.decode("utf-8")


def test_llama_cpp_puts_the_bos_only_where_the_tokenizer_adds_it(tmp_path: Path) -> None:
    adds = _tokenizer(tmp_path / "adds", bos_token="<|endoftext|>", add_bos_token=True)
    assert llamacpp_start(adds) == "<|endoftext|>"
    # SmolLM2's case: codedraft starts its prompt after a document separator; llama.cpp with nothing.
    plain = _tokenizer(tmp_path / "plain", bos_token="<|im_start|>", add_bos_token=False)
    assert (document_start(plain), llamacpp_start(plain)) == ("<|endoftext|>", "")
    assert llamacpp_start(_tokenizer(tmp_path / "none")) == ""


@pytest.mark.parametrize("healing", [False, True])
def test_the_naive_prompt_is_the_text_before_the_cursor_whatever_the_format(
    tmp_path: Path, healing: bool
) -> None:
    for name, config in {"fim": {}, "prefix-only": {"fim_template": "prefix-only"}}.items():
        served = _served(_tokenizer(tmp_path / name, bos_token="<|endoftext|>", add_bos_token=True, **config))
        full = _prompt(served, healing)
        assert "units.py" in full and PREFIX in full  # the daemon's own prompt has the snippet
        naive = naive_served(served)
        # A naive run retrieves no snippets; the path is in the request, as the editor sends it.
        assert _prompt(naive, healing, snippets=False) == "<|endoftext|>" + PREFIX
        # The engine's stop tokens stay the model's; the suffix stop of a prefix-only prompt applies.
        assert naive.fim.stop_token_ids == served.fim.stop_token_ids
        request = pb.CompleteRequest(session_id="s", prefix=PREFIX, suffix="x = 1\ny = 2\n", path="a.py")
        assert "x = 1\n" in prepare_complete(request, naive).sampling.stop


@pytest.mark.slow
def test_a_naive_run_sends_no_snippets_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = make_tiny_checkpoint(tmp_path / "tiny", "llama")
    out = tmp_path / "figures.json"
    argv = ["--model", str(model), "--cases", "2", "--block-cases", "1", "--max-new-tokens", "4"]
    assert cursor_infill.main([*argv, "--naive-prompt", "--json", str(out)]) == 0  # the index is not built
    figures = json.loads(out.read_text())
    said = (figures["naive_prompt"], figures["retrieval"], figures["fim_template"])
    assert said == (True, False, "prefix-only")
    assert figures["stdlib"]["mean_snippets"] == 0 and figures["numpy"]["cases"] == 2
    assert "naive: the window's text before the cursor only" in capsys.readouterr().out
