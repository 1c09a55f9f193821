from __future__ import annotations

from typing import Any

import pytest

from lsp_server.status import INDEX_PROGRESS_INTERVAL_S, STATUS_NOTIFICATION, StatusReporter
from tests.lsp_server.set_clock import set_clock


def make_reporter() -> tuple[StatusReporter, list[dict[str, Any]], list[str]]:
    sent: list[dict[str, Any]] = []
    shown: list[str] = []

    def notify(method: str, params: Any) -> None:
        assert method == STATUS_NOTIFICATION
        sent.append(params)

    return StatusReporter(notify, shown.append), sent, shown


def test_state_puts_what_needs_attention_first() -> None:
    reporter, sent, _ = make_reporter()
    reporter.update(indexing=True, index_message="indexing ws")
    assert sent[-1]["state"] == "indexing" and sent[-1]["message"] == "indexing ws"
    reporter.update(daemon_state="degraded", message="daemon down")
    assert sent[-1]["state"] == "degraded" and sent[-1]["message"] == "daemon down"
    reporter.update(daemon_state="ready", message="ready", indexing=False)
    assert sent[-1]["state"] == "ready"


def test_unchanged_status_is_not_resent_and_degraded_is_shown_once() -> None:
    reporter, sent, shown = make_reporter()
    reporter.update(daemon_state="degraded", message="daemon down")
    reporter.update(daemon_state="degraded", message="daemon down")
    reporter.update(daemon_state="degraded", message="daemon down")
    assert len(sent) == 1 and shown == ["codedraft: daemon down"]
    reporter.update(daemon_state="ready", message="ready")
    reporter.update(daemon_state="degraded", message="daemon down again")
    assert len(shown) == 2


def test_index_progress_is_throttled_but_the_end_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = set_clock(monkeypatch, "lsp_server.status")
    reporter, sent, _ = make_reporter()
    assert INDEX_PROGRESS_INTERVAL_S == 0.25
    for done, at in [(1, 100.0), (2, 100.1), (50, 100.2), (60, 100.25), (70, 100.4), (100, 100.45)]:
        clock.now = at
        reporter.index_progress(done, 100)
    assert [s["index"]["done"] for s in sent] == [1, 60, 100]
