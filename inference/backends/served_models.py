"""The models the daemon serves and which of them serves each task: the one owner of routing by task.

A daemon serves one model, which serves every task, or two: a completion model (`--model`) and a chat
model (`--chat-model`). The completion model serves what continues code at a cursor, and the chat
model what needs instructions. PredictEdit goes to the chat model only when the completion model's
next-edit format is the chat template's: a model trained on a published next-edit format (Sweep's,
Zeta) keeps it. Generate with a raw prompt is continued text, so the completion model keeps it.

Each model has its own engine and KV pool: the two models' layers differ in shape, so their KV blocks
cannot share one pool, and each engine's scheduler keeps its own priorities (a long refactor on the
chat model never queues a completion behind it; both engines share the machine's cores).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.served_model import ServedModel

COMPLETE = "complete"
PREDICT_EDIT = "predict_edit"
GENERATE_CHAT = "generate_chat"
GENERATE_PROMPT = "generate_prompt"
TASKS = (COMPLETE, PREDICT_EDIT, GENERATE_CHAT, GENERATE_PROMPT)
"""The daemon's tasks, as `TaskRoute.task` names them."""

COMPLETION = "completion"
CHAT = "chat"


@dataclass
class ServedModels:
    """The completion model and, when the daemon serves two, the chat model beside it.

    Invariant: `chat` is None or another `ServedModel` than `completion`, with its own backend.
    """

    completion: ServedModel
    chat: ServedModel | None = None

    def role_for(self, task: str) -> str:
        """Which model serves `task`: COMPLETION or CHAT (always COMPLETION with one model)."""
        if self.chat is None or task in (COMPLETE, GENERATE_PROMPT):
            return COMPLETION
        if task == PREDICT_EDIT and self.completion.next_edit.name != "chat":
            return COMPLETION
        return CHAT

    def by_role(self, role: str) -> ServedModel:
        """The model of `role` (COMPLETION or CHAT); the completion model when there is no chat model."""
        return self.chat if role == CHAT and self.chat is not None else self.completion

    def for_task(self, task: str) -> ServedModel:
        """The model that serves `task`."""
        return self.by_role(self.role_for(task))

    def roles(self) -> Iterator[tuple[str, ServedModel]]:
        """Each served model with its role, the completion model first."""
        yield COMPLETION, self.completion
        if self.chat is not None:
            yield CHAT, self.chat

    def info(self) -> pb.ModelInfo:
        """GetModelInfo: the completion model's info, with the chat model's beside it and the routes."""
        info = pb.ModelInfo()
        info.CopyFrom(self.completion.info)
        if self.chat is not None:
            info.chat_model.CopyFrom(self.chat.info)
        info.routes.extend(
            pb.TaskRoute(task=task, served_by=role, model_name=self.by_role(role).info.model.name)
            for task in TASKS
            for role in (self.role_for(task),)
        )
        return info
