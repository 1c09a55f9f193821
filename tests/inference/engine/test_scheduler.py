"""Scheduler policy without a model: admission order, prefill chunks and budget, priority, victims."""

from __future__ import annotations

import torch

from inference.config import EngineConfig, RequestKind
from inference.engine.scheduler import GENERATION_WAIT_S, Scheduler
from inference.engine.sequence import Request, Sequence
from inference.engine.text_stream import TextStream


class _NoDecoder:
    def push(self, token_id: int) -> str:
        return ""

    def flush(self) -> str:
        return ""


def _seq(name: str, arrival: int, prompt_len: int, kind: RequestKind = RequestKind.COMPLETION) -> Sequence:
    request = Request(name, prompt_token_ids=list(range(prompt_len)), kind=kind)
    return Sequence(
        request, list(range(prompt_len)), TextStream(_NoDecoder(), ()), torch.Generator(), {}, arrival
    )


def test_admission_puts_completions_first_then_arrival_order() -> None:
    scheduler = Scheduler(EngineConfig(max_running=2))
    gen = _seq("gen", 0, 10, RequestKind.GENERATION)
    late, early = _seq("late", 2, 10), _seq("early", 1, 10)
    for seq in (gen, late, early):
        scheduler.add(seq)
    assert [s.request_id for s in scheduler.admission_order()] == ["early", "late"]
    scheduler.start(early)
    assert [s.request_id for s in scheduler.admission_order()] == ["late"]


def test_prefill_chunks_budget_and_completion_priority() -> None:
    scheduler = Scheduler(EngineConfig(prefill_chunk=8, max_step_tokens=12))
    gen, comp, other = _seq("gen", 0, 20, RequestKind.GENERATION), _seq("comp", 1, 20), _seq("c2", 2, 20)
    for seq in (gen, comp, other):
        scheduler.add(seq)
        scheduler.start(seq)
    gen.num_computed = 20  # decoding
    gen.token_ids.append(5)
    work = [(w.seq.request_id, w.prefill_tokens) for w in scheduler.schedule()]
    # Completions read their prompts within the step budget; the generation waits meanwhile.
    assert work == [("comp", 8), ("c2", 4)]
    comp.num_computed = other.num_computed = 20
    comp.token_ids.append(1)
    other.token_ids.append(1)
    work = [(w.seq.request_id, w.prefill_tokens) for w in scheduler.schedule()]
    assert work == [("comp", 0), ("c2", 0), ("gen", 0)]


def test_preemption_victim_is_lowest_priority_latest() -> None:
    scheduler = Scheduler(EngineConfig())
    a, b, c = _seq("a", 0, 4), _seq("b", 1, 4, RequestKind.GENERATION), _seq("c", 2, 4)
    scheduler.add(a)
    scheduler.start(a)
    assert scheduler.preemption_victim() is None  # alone: nobody to take blocks from
    for seq in (b, c):
        scheduler.add(seq)
        scheduler.start(seq)
    victim = scheduler.preemption_victim()
    assert victim is b
    b.num_computed = 4
    scheduler.preempt(b)
    assert b.num_computed == 0 and b.metrics.preemptions == 1 and b in scheduler.waiting
    assert scheduler.preemption_victim() is c


def test_running_prefills_never_keep_a_completion_out() -> None:
    scheduler = Scheduler(EngineConfig(max_running=2))
    warm_a, warm_b = _seq("warm-a", 0, 10, RequestKind.PREFILL), _seq("warm-b", 1, 10, RequestKind.PREFILL)
    for seq in (warm_a, warm_b):
        scheduler.add(seq)
        scheduler.start(seq)
    comp, gen = _seq("comp", 2, 10), _seq("gen", 3, 10, RequestKind.GENERATION)
    later = _seq("warm-c", 4, 10, RequestKind.PREFILL)
    for seq in (later, gen, comp):
        scheduler.add(seq)
    # The running limit counts the others only; a prefill waits for room below the limit.
    assert [s.request_id for s in scheduler.admission_order()] == ["comp", "gen"]
    scheduler.start(comp)
    scheduler.start(gen)
    assert scheduler.admission_order() == []
    # While the others run (the generation waits for the completion's prompt), prefills get no work.
    assert [w.seq.request_id for w in scheduler.schedule()] == ["comp"]


def test_a_generation_waits_for_completions_prompts_at_most_its_bound_then_decodes_every_step() -> None:
    now = [100.0]
    scheduler = Scheduler(EngineConfig(prefill_chunk=8, max_step_tokens=8), clock=lambda: now[0])
    gen = _seq("gen", 0, 20, RequestKind.GENERATION)
    scheduler.add(gen)
    scheduler.start(gen)
    gen.num_computed = 20  # decoding
    gen.token_ids.append(5)
    arrival = 1

    def step() -> list[tuple[str, int]]:
        # A new completion arrives before every step (a storm of them): one is always reading its prompt.
        nonlocal arrival
        comp = _seq(f"c{arrival}", arrival, 8)
        arrival += 1
        scheduler.add(comp)
        scheduler.start(comp)
        work = [(w.seq.request_id, w.prefill_tokens) for w in scheduler.schedule()]
        scheduler.remove(comp)
        return work

    assert step() == [("c1", 8)]
    now[0] += GENERATION_WAIT_S / 2
    assert step() == [("c2", 8)]
    now[0] += GENERATION_WAIT_S / 2
    # Waited its bound: it ranks as a completion by arrival, ahead of the newer ones.
    assert step() == [("gen", 0), ("c3", 8)]
    # Steps slower than the bound: the generation decodes in each of them.
    for n in range(4, 7):
        now[0] += GENERATION_WAIT_S
        assert step() == [("gen", 0), (f"c{n}", 8)]
    # Fast steps again: it waits for the completions' prompts until the bound has passed once more.
    now[0] += GENERATION_WAIT_S / 4
    assert step() == [("c7", 8)]
    scheduler.remove(gen)
    assert scheduler.schedule() == []


def test_a_generation_that_waited_its_bound_is_admitted_and_reads_its_prompt_before_newer_completions() -> (
    None
):
    now = [0.0]
    scheduler = Scheduler(
        EngineConfig(prefill_chunk=8, max_step_tokens=8, max_running=1), clock=lambda: now[0]
    )
    gen, comp = _seq("gen", 0, 20, RequestKind.GENERATION), _seq("comp", 1, 20)
    scheduler.add(gen)
    scheduler.add(comp)
    assert [s.request_id for s in scheduler.admission_order()] == ["comp"]
    now[0] += GENERATION_WAIT_S
    assert [s.request_id for s in scheduler.admission_order()] == ["gen"]
    scheduler.start(gen)
    scheduler.start(comp)
    # The prompt budget goes by arrival too: the generation's chunk first, nothing left for the completion.
    assert [(w.seq.request_id, w.prefill_tokens) for w in scheduler.schedule()] == [("gen", 8)]
    # Having just had work, it gives way again.
    assert [(w.seq.request_id, w.prefill_tokens) for w in scheduler.schedule()] == [("comp", 8)]


def test_a_step_with_a_decoding_request_reads_fewer_prompt_tokens() -> None:
    config = EngineConfig(prefill_chunk=8, max_step_tokens=16, decode_step_prompt_tokens=4)
    scheduler = Scheduler(config)
    first, second, third = _seq("first", 0, 20), _seq("second", 1, 20), _seq("third", 2, 20)
    for seq in (first, second, third):
        scheduler.add(seq)
        scheduler.start(seq)
    # Nobody decodes yet: the whole step budget goes to prompts.
    assert [(w.seq.request_id, w.prefill_tokens) for w in scheduler.schedule()] == [
        ("first", 8),
        ("second", 8),
    ]
    first.num_computed = 20  # decoding now: its next token waits for only 4 prompt tokens of the others
    first.token_ids.append(5)
    assert [(w.seq.request_id, w.prefill_tokens) for w in scheduler.schedule()] == [
        ("first", 0),
        ("second", 4),
    ]
