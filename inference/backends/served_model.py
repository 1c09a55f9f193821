"""`ServedModel`: a loaded model pair behind its engine, with what the servicer needs to prompt it."""

from __future__ import annotations

from dataclasses import dataclass

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.protocol import InferenceBackend
from inference.prompts.chat import ChatTemplate
from inference.prompts.fim import FimTemplate
from inference.prompts.next_edit.inputs import NextEditFormat
from inference.reply_limits import RequestLimits
from inference.tokenizer import Tokenizer


@dataclass
class ServedModel:
    """The engine (as an `InferenceBackend`) and the target model's prompting facts and limits."""

    backend: InferenceBackend
    tokenizer: Tokenizer
    fim: FimTemplate
    chat: ChatTemplate | None
    context_length: int
    limits: RequestLimits
    info: pb.ModelInfo
    # The next-edit prompt format PredictEdit renders (chosen once at load, ModelInfo.next_edit_format).
    next_edit: NextEditFormat
    # Whether the backend can constrain the first generated tokens, which token healing needs (a
    # remote OpenAI-compatible engine cannot: its completion would repeat the text healing removed).
    constrains_tokens: bool = True
    # Whether Prefill computes prompts ahead of completions. A remote engine could not pre-empt a
    # prefill for a completion (nor keep it at the lowest priority), so there Prefill is skipped.
    prefills: bool = True
    # How the CPU holds the target's weights (`--weights`: float32, float16, q4_1, q4_1_q8), None elsewhere.
    weights: str | None = None
