"""A day's session, compressed: the real ``codedraft lsp`` and the daemon it starts, driven through
thousands of edits, completions (some cancelled), next-edit requests, files opened and closed,
saved, renamed, deleted and replaced on disk (a branch switch), and the daemon killed twice.

hypothesis's stateful testing generates the session; a failure is shrunk to a short sequence of
steps and printed. Every ``CHECK_EVERY`` steps and at the end: the server's text of every open
document equals the editor's; every request is answered within its timeout plus slack. At the end:
the server serves suggestions again after the kills, the idle daemon holds no KV block, neither
process's resident memory grew with the edits, and the server's index equals a fresh index of the
files on disk.

One rule, ``act``, draws each step's action by weight: hypothesis's swarm testing turns whole rules
off for an example, and a soak of one or two examples needs every action in each.

Runs in ``make e2e`` (``CODEDRAFT_E2E_SOAK=1``); ``CODEDRAFT_SOAK_STEPS`` and
``CODEDRAFT_SOAK_EXAMPLES`` size it, ``CODEDRAFT_SOAK_MODEL`` serves another model (a GGUF file or a
Hugging Face folder) instead of the scripted one. See docs/development.md.
"""

from __future__ import annotations

import collections
import os
import random
import shutil
import signal
import tempfile
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test
from lsprotocol import types

from tests.e2e.soak import checks
from tests.e2e.soak.editor_model import TYPED, OpenDocument, position, source_file, watched
from tests.e2e.soak.observations import daemon_pid, resident_kib
from tests.e2e.soak.session import LspSession
from tests.fixtures.scripted_model import make_scripted_checkpoint

pytestmark = pytest.mark.skipif(
    os.environ.get("CODEDRAFT_E2E_SOAK") != "1",
    reason="a soak of minutes: run `make e2e` (it sets CODEDRAFT_E2E_SOAK=1)",
)

STEPS = int(os.environ.get("CODEDRAFT_SOAK_STEPS", "700"))
"""Steps per session: about what hypothesis lets one example draw (it ends a session earlier when its
data runs out), so that both kills happen."""
EXAMPLES = int(os.environ.get("CODEDRAFT_SOAK_EXAMPLES", "1"))
SHRINK = os.environ.get("CODEDRAFT_SOAK_SHRINK", "1") == "1"
"""Whether a failing session is shrunk (minutes: every try runs a fresh server and daemon)."""
CHECK_EVERY = 100
"""Steps between checks of the documents' text and samples of resident memory."""
FILES = 8
"""Python files in the workspace at the start (``m0.py`` ...)."""
KILLS = 2
"""Times the daemon is killed (SIGKILL) in a session: each time the server must start another."""
WEIGHTS = {
    "type_burst": 8,
    "complete": 4,
    "complete_then_cancel": 3,
    "next_edit": 1,
    "open_file": 2,
    "close_file": 1,
    "save": 1,
    "rename_on_disk": 1,
    "delete_on_disk": 1,
    "switch_branch": 1,
}
"""How often each action is drawn, relatively."""
RESTART_STEPS = 20
"""Steps the session goes on after a kill before it waits for the restarted daemon."""
SERVED = "def total_of(values):\n    total = sum(values)\n    \n"
"""A document where the scripted model always suggests (``return total``)."""
SETTINGS = {"completion": {"confidence": "off"}}
"""Every suggestion the model writes is shown (the confidence gate is measured elsewhere)."""


class SoakMachine(RuleBasedStateMachine):
    """One editor session against a fresh server, workspace and daemon."""

    model: ClassVar[Path]

    def __init__(self) -> None:
        super().__init__()
        # unix socket paths must be short: the daemon's lives in the private runtime directory
        self.private = Path(tempfile.mkdtemp(prefix="cds-", dir="/tmp"))
        self.workspace = self.private / "ws"
        self.workspace.mkdir()
        for number in range(FILES):
            (self.workspace / f"m{number}.py").write_text(source_file(f"m{number}", number))
        self.documents: dict[str, OpenDocument] = {}
        self.steps = self.kills = self.requests = self.edits = self.served = self.waits = 0
        self.memory: dict[str, checks.Samples] = {"server": [], "daemon": []}
        self.restart_due: int | None = None
        self.broken = False
        self.session = LspSession(self.workspace, self.private, self.model, SETTINGS)
        self.wait_for_daemon(None)  # the server starts it at the first request

    @rule(data=st.data())
    def act(self, data: st.DataObject) -> None:
        """One step of the session: an action drawn by :data:`WEIGHTS` among those possible now (the
        next kill of the daemon, when one is due, comes first)."""
        if self.kills < KILLS and self.steps >= (self.kills + 1) * STEPS // (KILLS + 1):
            possible = ["kill_daemon"]
        elif self.restart_due is not None and self.steps >= self.restart_due:
            possible = ["wait_for_daemon"]
        else:
            possible = [
                name for name, weight in WEIGHTS.items() if self._possible(name) for _ in range(weight)
            ]
        try:
            getattr(self, data.draw(st.sampled_from(possible), label="action"))(data)
        except BaseException:
            self.broken = True
            raise

    def _possible(self, action: str) -> bool:
        if action == "open_file":
            return bool(self._closed())
        if action in ("rename_on_disk", "switch_branch"):
            return True
        if action == "delete_on_disk":
            return len(self._on_disk()) > 1
        return bool(self.documents)

    # --- files on disk and documents in the editor

    def _on_disk(self) -> list[str]:
        return sorted(path.name for path in self.workspace.glob("*.py"))

    def _closed(self) -> list[str]:
        return [name for name in self._on_disk() if name not in self.documents]

    def _pick(self, data: st.DataObject) -> OpenDocument:
        return self.documents[data.draw(st.sampled_from(sorted(self.documents)), label="document")]

    def _open(self, name: str, text: str) -> OpenDocument:
        document = OpenDocument(self.workspace / name, text)
        self.documents[name] = document
        item = types.TextDocumentItem(uri=document.uri, language_id="python", version=1, text=text)
        self.session.notify(types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(text_document=item))
        return document

    def _close(self, name: str) -> None:
        identifier = types.TextDocumentIdentifier(uri=self.documents.pop(name).uri)
        self.session.notify(
            types.TEXT_DOCUMENT_DID_CLOSE, types.DidCloseTextDocumentParams(text_document=identifier)
        )

    def open_file(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(self._closed()), label="file")
        self._open(name, (self.workspace / name).read_text())

    def close_file(self, data: st.DataObject) -> None:
        self._close(data.draw(st.sampled_from(sorted(self.documents)), label="document"))

    def type_burst(self, data: st.DataObject) -> None:
        """Up to 40 edits in a row to one document (typing, deleting, pasting), each its own didChange."""
        document = self._pick(data)
        count = data.draw(st.integers(1, 40), label="edits")
        chooser = random.Random(data.draw(st.integers(0, 2**16), label="seed"))
        for _ in range(count):
            start = chooser.randint(0, len(document.text))
            end = min(len(document.text), start + chooser.choice((0, 0, 0, 1, 1, 3, 12)))
            inserted = "" if end > start and chooser.random() < 0.5 else chooser.choice(TYPED)
            change = document.replace(start, end, inserted)
            self.session.notify(types.TEXT_DOCUMENT_DID_CHANGE, document.changed([change]))
            self.edits += 1

    def save(self, data: st.DataObject) -> None:
        """The editor writes a document to disk (the index's watcher sees it; the server does not ask
        for didSave)."""
        document = self._pick(data)
        document.path.write_text(document.text)

    def _somewhere(self, data: st.DataObject, document: OpenDocument) -> types.Position:
        offset = data.draw(st.integers(0, len(document.text)), label="offset")
        return position(document.text, offset)

    def complete(self, data: st.DataObject) -> None:
        document = self._pick(data)
        at = self._somewhere(data, document)
        params = checks.inline_at(document, at.line, at.character)
        answer = self.session.request(
            types.TEXT_DOCUMENT_INLINE_COMPLETION, params, checks.COMPLETION_TIMEOUT_S
        )
        self.requests += 1
        self.served += bool(answer is not None and answer.items)

    def complete_then_cancel(self, data: st.DataObject) -> None:
        document = self._pick(data)
        at = self._somewhere(data, document)
        after_s = data.draw(st.integers(0, 150), label="cancel after ms") / 1000
        self.requests += 1
        params = checks.inline_at(document, at.line, at.character)
        method, timeout_s = types.TEXT_DOCUMENT_INLINE_COMPLETION, checks.COMPLETION_TIMEOUT_S
        self.session.cancelled_request(method, params, after_s, timeout_s, msg_id=f"soak-{self.requests}")

    def next_edit(self, data: st.DataObject) -> None:
        document = self._pick(data)
        at = self._somewhere(data, document)
        params = {
            "textDocument": {"uri": document.uri, "version": document.version},
            "position": {"line": at.line, "character": at.character},
            "context": {"triggerKind": 2},
        }
        self.session.request("textDocument/copilotInlineEdit", params, checks.COMPLETION_TIMEOUT_S)
        self.requests += 1

    def rename_on_disk(self, data: st.DataObject) -> None:
        """A file renamed outside the editor; an open one is closed and reopened under its new name."""
        name = data.draw(st.sampled_from(self._on_disk()), label="file")
        new = f"r{data.draw(st.integers(0, 99), label='new name')}.py"
        if new in self._on_disk():
            return
        (self.workspace / name).rename(self.workspace / new)
        deleted, created = types.FileChangeType.Deleted, types.FileChangeType.Created
        changes = [(self.workspace / name, deleted), (self.workspace / new, created)]
        self.session.notify(types.WORKSPACE_DID_CHANGE_WATCHED_FILES, watched(changes))
        if name in self.documents:
            text = self.documents[name].text
            self._close(name)
            self._open(new, text)

    def delete_on_disk(self, data: st.DataObject) -> None:
        """A file deleted outside the editor; an open one stays open (its text unsaved)."""
        path = self.workspace / data.draw(st.sampled_from(self._on_disk()), label="file")
        path.unlink()
        changes = [(path, types.FileChangeType.Deleted)]
        self.session.notify(types.WORKSPACE_DID_CHANGE_WATCHED_FILES, watched(changes))

    def switch_branch(self, data: st.DataObject) -> None:
        """Files replaced under the editor, as checking out another branch does: an open one is
        reloaded with the new text (as editors do for a document without unsaved changes)."""
        variant = data.draw(st.integers(0, 9), label="branch")
        changes = []
        for number in range(data.draw(st.integers(1, FILES), label="files")):
            path = self.workspace / f"m{number}.py"
            kind = types.FileChangeType.Changed if path.exists() else types.FileChangeType.Created
            text = source_file(path.stem, variant)
            path.write_text(text)
            changes.append((path, kind))
            if (document := self.documents.get(path.name)) is not None:
                self.session.notify(types.TEXT_DOCUMENT_DID_CHANGE, document.changed([document.reload(text)]))
        self.session.notify(types.WORKSPACE_DID_CHANGE_WATCHED_FILES, watched(changes))

    def kill_daemon(self, data: st.DataObject) -> None:
        """SIGKILL to the daemon the server started: the server must start another. The session goes
        on meanwhile; :data:`RESTART_STEPS` steps later it waits for suggestions again."""
        pid = daemon_pid(self.session.server_pid)
        assert pid is not None, "the server has no daemon running"
        os.kill(pid, signal.SIGKILL)
        self.kills += 1
        self.restart_due = self.steps + RESTART_STEPS

    def wait_for_daemon(self, data: st.DataObject | None) -> None:
        """Asks for a suggestion until one comes (the server has started a daemon and it serves)."""
        self.waits += 1
        served = self._open("served.py", f"# wait {self.waits}\n{SERVED}")
        checks.wait_for_suggestion(self.session, served, 3, 4)
        self._close("served.py")
        self.restart_due = None

    # --- checks

    @invariant()
    def checked_every_so_often(self) -> None:
        self.steps += 1
        if self.steps % CHECK_EVERY == 0:
            checks.check_documents(self.session, self.documents)
            self._sample_memory()

    def _sample_memory(self) -> None:
        server = self.session.server_pid
        self.memory["server"].append((self.steps, server, resident_kib(server)))
        if (daemon := daemon_pid(server)) is not None:
            self.memory["daemon"].append((self.steps, daemon, resident_kib(daemon)))

    def teardown(self) -> None:
        """The final checks, when the session got far enough and no step failed; the workspace, the
        index and the daemon's log are kept when something failed."""
        try:
            if self.steps >= CHECK_EVERY and not self.broken:  # a shrunk sequence checks only what it reached
                self._final_checks()
        except BaseException:
            self.broken = True
            raise
        finally:
            self.session.close()
            if self.broken:
                print(f"soak: the session's workspace, index and daemon log are in {self.private}")
            else:
                shutil.rmtree(self.private, ignore_errors=True)

    def _final_checks(self) -> None:
        checks.check_documents(self.session, self.documents)
        self.wait_for_daemon(None)
        stats = checks.check_daemon_idle(
            self.session, f"unix:{self.private / 'run' / 'codedraft' / 'daemon.sock'}"
        )
        self._sample_memory()
        for process, samples in self.memory.items():
            checks.check_memory(process, samples)
        for name in list(self.documents):
            self._close(name)
        checks.check_index(self.session, self.workspace, self.private / "cache")
        print(
            f"soak: {self.steps} steps, {self.edits} edits, {self.requests} requests "
            f"({self.served} with a suggestion), daemon killed {self.kills} times; "
            f"last daemon: {stats.requests_total} requests, {stats.kv_blocks_cached} blocks cached; "
            f"resident memory (step, pid, KiB): {self.memory}; why suggestions were not shown: "
            f"{collections.Counter(status.get('suppressed') for status in self.session.client.statuses)}"
        )


@pytest.mark.timeout(1800)
def test_a_days_session_loses_nothing(tmp_path: Path) -> None:
    model = os.environ.get("CODEDRAFT_SOAK_MODEL")
    SoakMachine.model = Path(model) if model else make_scripted_checkpoint(tmp_path / "model")
    run_state_machine_as_test(
        SoakMachine,
        settings=settings(
            # hypothesis tries the simplest session first (one action over and over), then random ones
            max_examples=EXAMPLES + 1,
            stateful_step_count=STEPS,
            deadline=None,
            database=None,
            phases=[Phase.generate, Phase.shrink] if SHRINK else [Phase.generate],
            suppress_health_check=list(HealthCheck),
            print_blob=True,
        ),
    )
