"""What the daemon says of its model's room, as the language server sizes prompts with it."""

from __future__ import annotations

from dataclasses import dataclass

from indexer.token_estimate import TokenEstimate
from inference.api.codedraft.v1 import inference_pb2 as pb


@dataclass(frozen=True)
class ModelRoom:
    """What the daemon said of its model's room (``ModelInfo``); zeros while it has not said."""

    context_length: int = 0
    reply_reserve_limit: int = 0
    """Most tokens the daemon keeps for a reply, whatever max_tokens asks (0: unknown)."""
    chars_per_token: float = 0.0
    """The served tokenizer's characters per token of code (0: unknown)."""
    model: str = ""
    """The served model's name (its confidence calibration is kept under it)."""

    @classmethod
    def of(cls, info: pb.ModelInfo) -> ModelRoom:
        """The room a daemon's model info describes (of its completion model, when it serves two)."""
        return cls(info.model.context_length, info.reply_reserve_limit, info.chars_per_token, info.model.name)

    @classmethod
    def of_task(cls, info: pb.ModelInfo, task: str) -> ModelRoom:
        """The room of the model that serves ``task`` (``TaskRoute.task``): a daemon serving two
        models fits each request to its own model."""
        return cls.of(serving_model(info, task))

    def reply_reserve(self, max_tokens: int) -> int:
        """Tokens the daemon keeps for the reply of a request asking ``max_tokens`` (the wire contract
        of ``ModelInfo.reply_reserve_limit``; half the context for a daemon that does not say)."""
        return min(max_tokens, self.reply_reserve_limit or self.context_length // 2)

    @property
    def estimate(self) -> TokenEstimate:
        """Token estimates calibrated on the served model."""
        return TokenEstimate.measured(self.chars_per_token)


def serving_model(info: pb.ModelInfo, task: str) -> pb.ModelInfo:
    """The part of a daemon's model info that describes the model serving ``task``: its chat model's
    when the daemon routes the task there (``ModelInfo.routes``), else the info itself."""
    chat = any(route.task == task and route.served_by == "chat" for route in info.routes)
    return info.chat_model if chat and info.HasField("chat_model") else info
