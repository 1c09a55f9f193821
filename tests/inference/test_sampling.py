"""Sampling: temperature, top-p, seeds, greedy; and the stop-string filter of the text stream."""

from __future__ import annotations

import math

import pytest
import torch

from inference.config import SamplingParams
from inference.engine.text_stream import StopStringFilter, TextStream
from inference.sampling import choose_token, make_generator, token_probabilities


def test_top_p_keeps_smallest_set_reaching_p() -> None:
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    probs = token_probabilities(logits, SamplingParams(temperature=1.0, top_p=0.7))
    assert torch.allclose(probs, torch.tensor([[0.5 / 0.8, 0.3 / 0.8, 0.0, 0.0]]))
    probs = token_probabilities(logits, SamplingParams(temperature=1.0, top_p=0.5))
    assert torch.equal(probs, torch.tensor([[1.0, 0.0, 0.0, 0.0]]))
    greedy = token_probabilities(logits, SamplingParams())
    assert torch.equal(greedy, torch.tensor([[1.0, 0.0, 0.0, 0.0]]))


def test_temperature_sharpens() -> None:
    logits = torch.tensor([[1.0, 0.0]])
    hot = token_probabilities(logits, SamplingParams(temperature=2.0))[0, 0]
    cold = token_probabilities(logits, SamplingParams(temperature=0.5))[0, 0]
    # Two tokens whose logits differ by 1: the first has probability 1 / (1 + exp(-1 / temperature)).
    assert float(hot) == pytest.approx(1 / (1 + math.exp(-0.5)))
    assert float(cold) == pytest.approx(1 / (1 + math.exp(-2.0)))
    assert cold > hot


def test_seeded_sampling_is_reproducible() -> None:
    logits = torch.zeros(50)
    params = SamplingParams(temperature=1.0, seed=7)

    def draw() -> list[int]:
        gen = make_generator(7, torch.device("cpu"))
        return [choose_token(logits, params, gen) for _ in range(20)]

    assert draw() == draw()
    assert len(set(draw())) > 5


def test_stop_filter_holds_back_possible_prefix() -> None:
    f = StopStringFilter(["\n\n", "END"])
    assert f.push("abc\n") == "abc"
    assert f.push("x") == "\nx"
    assert f.push("EN") == ""
    assert f.push("D tail") == ""
    assert f.stopped
    assert f.flush() == ""
    g = StopStringFilter(["END"])
    assert g.push("xE") == "x"
    assert g.flush() == "E"


class _CharDecoder:
    """Token id -> chr(id), with ids >= 1000 meaning 'half a character' (held back, like UTF-8)."""

    def __init__(self) -> None:
        self.held = ""

    def push(self, token_id: int) -> str:
        if token_id >= 1000:
            self.held += chr(token_id - 1000)
            return ""
        out, self.held = self.held + chr(token_id), ""
        return out

    def flush(self) -> str:
        out, self.held = self.held, ""
        return out


def test_text_stream_finish_flushes_decoder_and_filter() -> None:
    stream = TextStream(_CharDecoder(), ["zz"])
    assert stream.push(ord("a")) == "a"
    assert stream.push(ord("z")) == ""
    assert stream.push(1000 + ord("b")) == ""
    assert stream.finish() == "zb"
    stopped = TextStream(_CharDecoder(), ["zz"])
    assert stopped.push(ord("z")) + stopped.push(ord("z")) == ""
    assert stopped.stopped and stopped.finish() == ""


def test_a_text_rule_cuts_the_stream_appends_its_text_and_stops_it() -> None:
    """The rule sees the whole text after each delta holding a line end; its answer replaces what
    follows the cut, and the stream ends (nothing more from later tokens or finish)."""
    seen: list[str] = []

    def rule(text: str) -> tuple[int, str] | None:
        seen.append(text)
        return (text.index("\n") + 1, "REST") if text.startswith("ab\n") else None

    stream = TextStream(_CharDecoder(), ["zz"], rule)
    assert [stream.push(ord(c)) for c in "ab"] == ["a", "b"]
    assert not seen  # no line end yet
    assert stream.push(ord("\n")) == "\nREST"
    assert stream.stopped
    assert stream.push(ord("c")) == "" and stream.finish() == ""
    assert seen == ["ab\n"]
