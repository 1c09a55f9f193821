"""Retrieved snippets for ``codedraft bench model [--model PATH]`` (on by default; ``--no-index``: off):
the corpus indexed as the language server indexes a workspace, and at each cursor the snippets its
request would carry.

The corpus is copied to a scratch folder (without the directories every workspace skips) and indexed
there. At a case's cursor the open document is what the editor has: the file without the hidden line,
indexed as an unsaved buffer in place of the file on disk (as the language server does on every
change), so no snippet can hold the hidden line; the cursor's own region is never retrieved anyway.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from types import TracebackType

from bench.cursor_cases import CursorCase
from indexer.positions import utf16_length
from indexer.retrieval.base import RetrievalQuery, Snippet
from indexer.skipping import ALWAYS_EXCLUDED_DIRECTORIES
from indexer.workspace import WorkspaceIndex

# The language server gives retrieval 50 ms; a loaded benchmark machine may need more, and a cut
# short retrieval would make the figures depend on the load.
TIME_BUDGET_MS = 2000.0


class CorpusRetrieval:
    """An index of one corpus in a scratch folder (removed by ``close``), queried per case."""

    def __init__(self, root: Path, workers: int = 1) -> None:
        self._scratch = Path(tempfile.mkdtemp(prefix="codedraft-bench-index-"))
        copy = self._scratch / "workspace"
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(*ALWAYS_EXCLUDED_DIRECTORIES))
        self.index = WorkspaceIndex(copy, db_path=self._scratch / "index.sqlite", workers=workers)
        self.report = self.index.refresh()

    def snippets(self, case: CursorCase, token_budget: int) -> list[Snippet]:
        """What the language server retrieves at ``case``'s cursor within ``token_budget`` tokens."""
        if token_budget <= 0:
            return []
        text = case.prefix + case.suffix
        lines = case.prefix.split("\n")
        # As for a user who has just opened the file: no other document was edited recently.
        self.index.set_recent_documents([])
        self.index.update_buffer(case.path, text)
        try:
            query = RetrievalQuery(
                path=case.path, text=text, line=len(lines) - 1, column=utf16_length(lines[-1])
            )
            return self.index.retrieve(query, token_budget, TIME_BUDGET_MS)
        finally:
            self.index.close_buffer(case.path)

    def close(self) -> None:
        """Closes the index and removes the scratch folder."""
        self.index.close()
        shutil.rmtree(self._scratch, ignore_errors=True)

    def __enter__(self) -> CorpusRetrieval:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
