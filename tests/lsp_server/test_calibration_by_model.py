"""The confidence gate reads the calibration of the model that serves completions: with the default
pair (Gemma 3 270M for completions, SmolLM2 for chat tasks) Gemma's shipped point, with SmolLM2
alone SmolLM2's; the shipped entries are named as the loader names the packaged files."""

from __future__ import annotations

import math
from pathlib import Path

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.default_model import PACKAGE_FILE
from lsp_server.completion.block_or_line import load_later_lines
from lsp_server.completion.confidence_gate import load_calibrations
from lsp_server.completion.service import CompletionService
from lsp_server.config import CompletionSettings
from lsp_server.model_room import ModelRoom
from tests.lsp_server.test_completion_service import ScriptedDaemon, query

GEMMA = "gemma-3-270m-q4_k_m"  # the stem of the file the Gemma package assembles
SMOLLM2 = "SmolLM2-135M-Instruct.Q4_1"
SETTINGS = CompletionSettings(debounce_ms=1, max_debounce_ms=2)


def _info(completion: str, chat: str | None) -> pb.ModelInfo:
    info = pb.ModelInfo(model=pb.ModelDescription(name=completion, context_length=8192))
    if chat is not None:
        info.chat_model.CopyFrom(pb.ModelInfo(model=pb.ModelDescription(name=chat, context_length=8192)))
        info.routes.add(task="complete", served_by="completion", model_name=completion)
        info.routes.add(task="chat", served_by="chat", model_name=chat)
    return info


async def _shown(info: pb.ModelInfo, tokens: int, mean: float, least: float) -> tuple[str | None, str | None]:
    """What the service shows of a first line of these figures, and why not when it shows nothing."""
    daemon = ScriptedDaemon(["return total"])
    daemon.figures = pb.RequestFigures(
        prompt_tokens=40,
        generated_tokens=tokens,
        lines=[pb.LineConfidence(tokens=tokens, mean_logprob=mean, min_logprob=least)],
        first_token_logprob=least,
    )
    room = ModelRoom.of(info)
    service = CompletionService(lambda: SETTINGS, daemon.stream, room=lambda: room)
    outcome = await service.complete(query("def f(total):\n    |\n"))
    return outcome.text, outcome.reason


def test_the_shipped_entries_are_keyed_by_the_packaged_files_names() -> None:
    assert Path(PACKAGE_FILE).stem == SMOLLM2
    calibrations = load_calibrations()
    gemma, smollm2 = calibrations[GEMMA].chosen, calibrations[SMOLLM2].chosen
    assert (gemma.feature, gemma.threshold) == ("min", -0.7062)
    assert (smollm2.feature, smollm2.threshold) == ("sum", -2.5827)
    # no later-lines point of Gemma's is right half the time: one line at block cursors, as SmolLM2
    assert math.isinf(load_later_lines()[GEMMA].chosen.threshold)


async def test_the_default_pair_is_gated_at_gemmas_point_and_smollm2_alone_at_its_own() -> None:
    pair, alone = _info(GEMMA, SMOLLM2), _info(SMOLLM2, None)
    assert ModelRoom.of(pair).model == GEMMA
    # six tokens, each at least -0.6 (Gemma's least >= -0.7062) but -3.3 in all (SmolLM2's total < -2.5827)
    assert await _shown(pair, 6, -0.55, -0.6) == ("return total", None)
    assert await _shown(alone, 6, -0.55, -0.6) == (
        None,
        "not confident enough (first line total log-probability -3.30 < -2.58)",
    )
    # four tokens, -2.0 in all, but one at -1.0: the other way round
    assert await _shown(pair, 4, -0.5, -1.0) == (
        None,
        "not confident enough (first line least log-probability -1.00 < -0.71)",
    )
    assert await _shown(alone, 4, -0.5, -1.0) == ("return total", None)
