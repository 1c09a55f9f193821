"""codedraft's workspace indexer: tree-sitter tags and chunks in SQLite, kept live, and retrieval.

The language server's API (importing this package is light; tree-sitter loads on first parse)::

    from indexer.workspace import WorkspaceIndex
    from indexer.retrieval.base import RetrievalQuery, Snippet

    index = WorkspaceIndex(root)              # opens (or rebuilds) the store in the cache directory;
                                              # db_path=... or $CODEDRAFT_INDEX_DIR puts it elsewhere;
                                              # workers=N parses large refreshes in N processes
    report = index.refresh(progress=None)     # add / update / delete by content hash -> RefreshReport;
                                              # progress(done, total) is called per file
    index.refresh_files([path, ...])          # re-index a few files (gone or ignored ones leave)
    index.update_buffer(path, text)           # an editor's unsaved text replaces the file's records
                                              # (one parse + write; during a refresh it is queued)
    index.close_buffer(path)                  # back to the file on disk
    index.set_recent_documents([(path, text)])  # e.g. open tabs, for the "recent" retriever (at most 8);
                                              # update_buffer and watched changes also count as recent
    index.start_watching(); index.stop_watching()   # watchdog, debounced, re-indexes changed files
    snippets = index.retrieve(
        RetrievalQuery(path, text, line, column),   # line 0-based, column in UTF-16 units (LSP)
        token_budget=1024, time_budget_ms=50, cancel=event,  # anything with is_set()
    )                                         # -> list[Snippet], best first, within the budget
    index.close()

A ``Snippet`` has ``path`` (relative to the workspace, "/"), ``start_line``/``end_line`` (0-based,
inclusive), ``text``, ``sources`` (the retrievers that found it: "definitions", "bm25", "recent") and
``score`` (reciprocal rank fusion). Tokens are estimated by ``indexer.token_estimate.TokenEstimate``
(pass ``estimate=`` calibrated from the daemon's ``ModelInfo.chars_per_token``); the daemon counts
real tokens.

Paths given to the index may be absolute or relative to the workspace (a path outside it raises
ValueError). Blocking calls (refresh, update_buffer) belong in a thread in an async server; retrieval
reads through its own SQLite connection, so it runs while a refresh writes. A database SQLite finds
damaged during a refresh is rebuilt from scratch (with a log line).

Positions in the store: byte ranges of the UTF-8 source (invalid UTF-8 is decoded with U+FFFD and
positions count in that re-encoded text), 0-based lines, UTF-16 columns.
"""
