"""Replays the edits-by-example cases (``mine_repeats.py``) through the language server's own
next-edit service, in process and with no model (``nextEdit.model`` off): the user types a change as
a few keystrokes (one burst of the service's history), pauses, asks for the next edit at the end of
it, then accepts each edit offered (the editor applies it, the change comes in, the accept command
follows) and asks again, until no edit or ``max_chain`` accepts.

A repeat case: the user types the first block of its group (the blocks that make the same change,
``mine_repeats.repeated_group``); if nothing at all was offered and two or more blocks of the group
are left, the user types the next one too (a second example) and the chain starts there. A silence
case: the user types its one block; the right answer is no edit.

Every accepted edit is scored against the commit: right when it changes only what the way to the
commit's text (all its blocks in the file) changes (``scoring.is_on_the_way``: token distances,
whitespace left out, since the commits were often re-flowed by a formatter, which a user's next
edits are not). A user who reads each edit before the Tab dismisses the first wrong one, which stops
its rule: ``outcomes`` keeps the order, and the report counts what such a user is shown too. Recall
is counted twice: the share of the group's blocks left to predict that the accepted edits made
(sites), and the share of the token distance from the user's text to the group made everywhere that
they covered (tokens: a large block weighs more).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from bench.next_edit.cases import Block, Case, apply_blocks
from bench.next_edit.keystrokes import apply_changes, changed_span, keystrokes, position_at
from bench.next_edit.mine_repeats import repeated_group
from bench.next_edit.scoring import code_token_distance, is_on_the_way, is_revert
from indexer.retrieval.base import RetrievalQuery, Snippet
from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.config import NextEditSettings
from lsp_server.next_edit.pending import PendingEdit
from lsp_server.next_edit.service import NextEditService

KEYSTROKE_GAP_S = 0.03
PAUSE_S = 1.0
"""After typing, before asking: longer than a keystroke gap, as an editor's debounce."""
APART_S = 5.0
"""Between two examples: a new burst of the history."""


@dataclass
class Replayed:
    """One case's outcome: edits offered and accepted (right or not), the line changes left to
    predict and those predicted, reverts, each request's latency (ms) and whether the first request
    after the user's edit showed an edit."""

    case: str
    kind: str
    change: str | None
    examples: int = 1
    accepted: int = 0
    right: int = 0
    to_predict: int = 0  # token distance from the user's text to the group made everywhere
    predicted: int = 0  # of it, covered by the accepted edits
    sites: int = 0  # blocks of the group the user left to predict
    sites_done: int = 0  # of them, made by the accepted edits
    reverts: int = 0
    shown: bool = False
    first_ms: list[float] = field(default_factory=list)
    chain_ms: list[float] = field(default_factory=list)
    wrong: list[tuple[str, str]] = field(default_factory=list)
    outcomes: list[bool] = field(default_factory=list)  # each accepted edit right or not, in order


class _Documents:
    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def text(self, path: str) -> str | None:
        return self.texts.get(path)

    def language(self, path: str) -> str | None:
        return "python"

    def open_texts(self) -> Mapping[str, str]:
        return dict(self.texts)


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def _no_model(request: pb.PredictEditRequest, timeout_s: float) -> pb.PredictEditReply:
    raise AssertionError("the model was asked with nextEdit.model off")


def _no_snippets(query: RetrievalQuery, budget: int, ms: float, cancel: threading.Event) -> list[Snippet]:
    return []


class _Session:
    """One case's editor: a fresh service (no case sees another's history or rules) and its file."""

    def __init__(self, case: Case) -> None:
        self.documents, self.clock = _Documents(), _Clock()
        self.service = NextEditService(
            lambda: NextEditSettings(model=False),
            self.documents,
            lambda: None,
            _no_model,
            _no_snippets,
            self.clock,
        )
        self.path = case.path
        self.version = 1
        self.documents.texts[self.path] = case.before
        self.service.opened(self.path, 1, case.before)

    @property
    def text(self) -> str:
        return self.documents.texts[self.path]

    def change(self, text: str) -> None:
        self.version += 1
        self.documents.texts[self.path] = text
        self.service.changed(self.path, self.version, text)

    def type(self, new: str) -> None:
        """The user types the text into ``new`` (a deletion, then a few chunks), then pauses."""
        text = self.text
        for change in keystrokes(text, new):
            self.clock.now += KEYSTROKE_GAP_S
            text = apply_changes(text, [change])
            self.change(text)
        self.clock.now += PAUSE_S

    async def ask(self, offset: int) -> tuple[list[PendingEdit], float]:
        """The edits offered in this file with the cursor at ``offset``, and the answer's time (ms)."""
        started = time.perf_counter()
        answer = await self.service.predict(self.path, *position_at(self.text, offset))
        return [edit for edit in answer.edits if edit.path == self.path], (
            time.perf_counter() - started
        ) * 1000


async def replay(case: Case, max_chain: int = 30) -> Replayed:
    """One case (see the module's docstring)."""
    session = _Session(case)
    result = Replayed(case.name, case.kind, case.change)
    group = _group(case)
    typed = [group[0]]
    session.type(apply_blocks(case.before, typed))
    offered = await _ask_and_accept(session, case, group, typed, result, max_chain)
    if case.kind == "repeat" and not offered and len(group) - len(typed) >= 2:
        session.clock.now += APART_S
        typed.append(group[1])
        session.type(apply_blocks(case.before, typed))
        result.examples = 2
        result.to_predict = result.sites = 0  # counted from the second example on
        await _ask_and_accept(session, case, group, typed, result, max_chain)
    return result


async def _ask_and_accept(
    session: _Session,
    case: Case,
    group: tuple[Block, ...],
    typed: list[Block],
    result: Replayed,
    max_chain: int,
) -> bool:
    """Asks after the user's edit, then accepts each edit offered; whether any was offered."""
    user_before, base = apply_blocks(case.before, typed[:-1]), session.text
    truth, wanted = apply_blocks(case.before, case.blocks), apply_blocks(case.before, group)
    result.to_predict = code_token_distance(base, wanted)
    left = [block for block in group if block not in typed]
    result.sites = len(left)
    start, _, inserted = changed_span(user_before, base)
    edits, latency = await session.ask(start + len(inserted))
    result.first_ms.append(latency)
    if edits:
        result.shown = True
        result.reverts += is_revert(user_before, base, edits[0].applied_to(base))
    offered = bool(edits)
    while edits and result.accepted < max_chain:
        edit, text = edits[0], session.text
        after = edit.applied_to(text)
        result.accepted += 1
        right = is_on_the_way(text, after, truth)
        result.right += right
        result.outcomes.append(right)
        if not right:
            result.wrong.append((edit.old, edit.new))
        if is_on_the_way(text, after, wanted):
            result.predicted += code_token_distance(text, after)
        session.change(after)
        session.service.accepted(edit.id)
        session.clock.now += PAUSE_S
        edits, latency = await session.ask(edit.start + len(edit.new))
        result.chain_ms.append(latency)
    final = session.text
    result.sites_done = sum(
        is_on_the_way(base, apply_blocks(case.before, [*typed, block]), final) for block in left
    )
    return offered


def _group(case: Case) -> tuple[Block, ...]:
    """The blocks the user and the predictions make: a repeat case's group, a silence case's one."""
    if case.kind != "repeat":
        return case.blocks
    found = repeated_group(case.before, case.after)
    assert found is not None, f"{case.name}: no repeated change (mined with other rules?)"
    return found[0]


def replay_all(cases: list[Case], max_chain: int = 30) -> list[Replayed]:
    """Every case, in order, each on a fresh service."""

    async def run() -> list[Replayed]:
        return [await replay(case, max_chain) for case in cases]

    return asyncio.run(run())
