"""bench next-edit --repeats: mining recurring changes, scoring an edit on the way to the commit, and
replaying a case through the service with exact counts."""

from __future__ import annotations

import asyncio

import pytest

from bench.next_edit.cases import Block, Case, blocks_between, load_cases
from bench.next_edit.mine_repeats import REPOSITORIES, cases_file, kind_of, repeated_group
from bench.next_edit.repeat_replay import Replayed, replay, replay_all
from bench.next_edit.repeat_report import figures_of
from bench.next_edit.scoring import code_token_distance, is_on_the_way

FILLER = "".join(f"value_{n} = compute({n})\n" for n in range(20))
BEFORE = (
    FILLER
    + "a = fetch(url)\nb = 1\nc = fetch(other)\nd = 2\ne = fetch(third)\n"
    + FILLER.replace("value", "more")
)
AFTER = BEFORE.replace("fetch(url)", "fetch(url, timeout=5)").replace(
    "fetch(other)", "fetch(other, timeout=5)"
)
AFTER = AFTER.replace("fetch(third)", "fetch(third, timeout=5)")


def test_a_change_made_at_several_blocks_is_a_repeat_and_its_kind_is_named() -> None:
    group = repeated_group(BEFORE, AFTER)
    assert group is not None
    blocks, kind = group
    assert [b.start for b in blocks] == [20, 22, 24] and kind == "argument added"
    assert repeated_group(BEFORE, BEFORE.replace("fetch(url)", "fetch(url, timeout=5)")) is None
    renamed = BEFORE.replace("fetch", "get")
    assert repeated_group(BEFORE, renamed) is None  # a pure rename is another kind of case


@pytest.mark.parametrize(
    ("change", "kind"),
    [
        ((("insert", "", ", timeout = 5"),), "argument added"),
        ((("insert", "", "not"),), "inserted"),
        ((("delete", "# type : ignore", ""),), "deleted"),
        ((("replace", "13", "12"),), "word replaced"),
        ((("replace", "len ( x ) == 0", "not x"),), "rewritten"),
    ],
)
def test_kinds_of_transformation(change: tuple[tuple[str, str, str], ...], kind: str) -> None:
    assert kind_of(change) == kind


def test_an_edit_is_on_the_way_when_it_makes_only_changes_the_commit_makes() -> None:
    current = "x = f(a)\ny = f(b)\n"
    truth = "x = f(a, 1)\ny = f(\n    b, 1\n)\n"  # the commit re-flowed the second call
    assert code_token_distance(current, truth) == 4
    assert is_on_the_way(current, "x = f(a)\ny = f(b, 1)\n", truth)
    assert not is_on_the_way(current, "x = f(a)\ny = f(b, 2)\n", truth)
    assert not is_on_the_way(current, current, truth)


def test_a_replayed_case_offers_the_other_sites_one_accept_each() -> None:
    case = Case(
        "t", "c", "s", "t.py", "repeat", BEFORE, blocks_between(BEFORE, AFTER), change="argument added"
    )
    result = asyncio.run(replay(case))
    assert (result.shown, result.accepted, result.right, result.reverts) == (True, 2, 2, 0)
    assert (result.sites, result.sites_done, result.to_predict, result.predicted) == (2, 2, 8, 8)
    assert result.examples == 1 and len(result.chain_ms) == 2


def test_after_a_one_change_commit_nothing_is_offered() -> None:
    after = BEFORE.replace("b = 1", "b = 10")
    case = Case("t", "c", "s", "t.py", "silence", BEFORE, (Block(21, 22, ("b = 10\n",)),))
    assert case.after == after
    result = asyncio.run(replay(case))
    assert (result.shown, result.accepted) == (False, 0)


def test_cases_replayed_in_either_order_give_the_same_results() -> None:
    repeat = Case(
        "r", "c", "s", "t.py", "repeat", BEFORE, blocks_between(BEFORE, AFTER), change="argument added"
    )
    wrapped = BEFORE.replace("c = fetch(other)", "c = list(fetch(other))").replace(
        "e = fetch(third)", "e = list(fetch(third))"
    )
    other = Case("w", "c", "s", "t.py", "repeat", BEFORE, blocks_between(BEFORE, wrapped), change="inserted")

    def outcomes(order: list[Case]) -> dict[str, tuple[object, ...]]:
        results = replay_all(order)
        return {r.case: (r.accepted, r.right, r.sites, r.sites_done, r.examples, r.wrong) for r in results}

    forward, backward = outcomes([repeat, other]), outcomes([other, repeat])
    assert forward == backward
    assert forward["r"] == (2, 2, 2, 2, 1, [])
    assert forward["w"] == (2, 1, 1, 1, 1, [("fetch(url)", "list(fetch(url))")])  # one site the commit left
    assert replay_all([other])[0].outcomes == [False, True]  # the nearest site first: the one it left


def test_the_committed_case_files_hold_repeats_and_silences_of_three_repositories() -> None:
    for name in REPOSITORIES:
        cases = load_cases(cases_file(name))
        assert {case.kind for case in cases} == {"repeat", "silence"}
        assert all(repeated_group(c.before, c.after) is not None for c in cases if c.kind == "repeat")


def test_a_user_who_dismisses_the_first_wrong_edit_is_shown_the_edits_up_to_it() -> None:
    chains = [[True, True, False, True, False], [True, True], [False, True], []]
    results = [
        Replayed(f"c{n}", "repeat", "inserted", outcomes=outcomes) for n, outcomes in enumerate(chains)
    ]
    for result in results:
        result.accepted, result.right = len(result.outcomes), sum(result.outcomes)
    figures = figures_of(results)
    assert (figures.right, figures.accepted) == (6, 9)
    assert (figures.reviewed_right, figures.reviewed_shown) == (4, 6)
    assert figures.reviewed_precision == 4 / 6
