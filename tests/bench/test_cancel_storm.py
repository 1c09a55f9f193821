"""bench cancel-storm: a small storm beside a second busy daemon on the tiny model, accounted for exactly;
the plan's actions and sessions; the failures the report names."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from bench.cancel_storm import parse_args, run_storms, storm_prompts
from bench.storm_actions import ACTIONS, COMPLETION_TOKENS, STREAMED_TOKENS, Outcome, plan_storm
from bench.storm_report import PhaseResult, PoolCheck, failures
from tests.fixtures.tiny_models import make_tiny_checkpoint

REQUESTS = 24
CLIENTS = 4


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_checkpoint(tmp_path_factory.mktemp("models") / "tiny-base", "llama")


def test_a_storm_beside_a_busy_second_daemon_loses_nothing_and_times_nothing_out(tiny_model: Path) -> None:
    size = ["--requests", str(REQUESTS), "--clients", str(CLIENTS)]
    args = parse_args(["--model", str(tiny_model), *size, "--phases", "beside", "--deadline-s", "60"])
    planned = plan_storm(
        storm_prompts(args.sources, REQUESTS, 1000, args.context_lines), CLIENTS, 0, 60.0, "beside0"
    )
    info, (result,) = run_storms(args)

    assert info.model.name == tiny_model.name
    assert [o.action for o in result.outcomes] == [p.action for p in planned]
    assert result.timed_out == []
    assert result.unexpected == []
    long_deadline = [o for o in result.outcomes if o.long_deadline]
    assert len(long_deadline) == sum(p.action != "deadline" for p in planned)
    # Only a short-deadline request can expire before the daemon sees it.
    expired_early = sum(o.outcome == "DEADLINE_EXCEEDED" for o in result.outcomes)
    assert REQUESTS - expired_early <= result.requests_received <= REQUESTS
    assert result.pool == PoolCheck(True, 0, result.pool.requests_total, result.pool.requests_total)
    assert result.fresh == "done"
    assert result.second_tokens_per_s is not None and result.second_tokens_per_s > 0
    assert failures([result]) == []


def test_the_plan_repeats_per_seed_mixes_every_action_and_shares_each_session_between_two_clients() -> None:
    prompts = storm_prompts(parse_args([]).sources, 40, 3, 10)
    assert len(prompts) == 40
    first, again = plan_storm(prompts, 8, 5, 120.0, "a"), plan_storm(prompts, 8, 5, 120.0, "b")
    assert [p.action for p in first] == [p.action for p in again]
    assert set(Counter(p.action for p in first)) == set(ACTIONS)
    sessions = Counter((p.request.session_id, p.client) for p in first)
    assert Counter(session for session, _ in sessions) == {f"a-s{n}": 2 for n in range(4)}
    for p in first:
        assert (p.timeout_s == 120.0) == p.long_deadline
        streamed = p.action in ("cancel", "disconnect")
        low, high = (STREAMED_TOKENS, STREAMED_TOKENS) if streamed else COMPLETION_TOKENS
        assert low <= p.request.sampling.max_tokens <= high


def test_failures_name_a_long_deadline_timeout_a_leaked_pool_and_a_failed_fresh_request() -> None:
    outcomes = [
        Outcome("generate", "DEADLINE_EXCEEDED", 120.0, True),
        Outcome("finish", "DEADLINE_EXCEEDED", 120.0, True),
        Outcome("generate", "DEADLINE_EXCEEDED", 120.0, True),
        Outcome("deadline", "DEADLINE_EXCEEDED", 0.1, False),
        Outcome("generate", "UNAVAILABLE", 1.0, True),
    ]
    result = PhaseResult("beside", outcomes, 10.0, 5.0, 3.0, 5, PoolCheck(True, 4, 9, 8), "failed: gone")
    assert failures([result]) == [
        "beside: 1 finish request(s) with the long deadline ran out of time",
        "beside: 2 generate request(s) with the long deadline ran out of time",
        "beside: 1 generate request(s) ended 'UNAVAILABLE'",
        "beside: 4 KV blocks held with no request running",
        "beside: 1 requests never finished",
        "beside: a fresh request after the storm ended 'failed: gone'",
    ]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--requests", "0"], "--clients and --requests must be at least 1"),
        (["--deadline-s", "-1"], "--deadline-s must be a number of seconds above 0, got -1"),
        (["--deadline-s", "inf"], "--deadline-s must be a number of seconds above 0, got inf"),
        (["--busy", "-1"], "--busy, --second-clients and --context-lines must be at least 0"),
        (["--phases", "nowhere"], "--phases takes a comma-separated list of alone, beside, got 'nowhere'"),
    ],
)
def test_bad_flags_are_refused_with_the_reason(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_args(flags)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
