"""Open documents: whether the last edit deleted text, typing rhythm, unsaved text for the index, and
the edit history that next-edit predictions read.

pygls keeps the documents' text itself; these handlers add what completions and retrieval need.
"""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types

from lsp_server.server import CodedraftServer

log = logging.getLogger(__name__)

# Unsaved text reaches the index this long after the last edit (retrieval sees what the user sees,
# without re-indexing on every keystroke).
BUFFER_SYNC_DELAY_S = 0.5


def setup(server: CodedraftServer) -> None:
    pending: dict[str, asyncio.TimerHandle] = {}

    def sync_buffer_later(ls: CodedraftServer, uri: str) -> None:
        if (handle := pending.pop(uri, None)) is not None:
            handle.cancel()
        loop = asyncio.get_running_loop()
        pending[uri] = loop.call_later(BUFFER_SYNC_DELAY_S, lambda: ls.spawn(_sync_buffer(ls, uri)))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: CodedraftServer, params: types.DidOpenTextDocumentParams) -> None:
        document = params.text_document
        ls.deleted[document.uri] = False
        sync_buffer_later(ls, document.uri)
        ls.next_edits.opened(ls.relative_path(document.uri), document.version, document.text)
        # Where the cursor is, the notification codedraft/cursor says; until then, the start.
        ls.prefill.moved(params.text_document.uri, types.Position(line=0, character=0))

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: CodedraftServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.deleted[uri] = bool(params.content_changes) and all(
            _is_deletion(change) for change in params.content_changes
        )
        ls.completions.debounce.edited(uri)
        ls.prefill.edited(uri)
        sync_buffer_later(ls, uri)
        if (document := ls.open_document(uri)) is not None:  # pygls has applied the changes
            ls.next_edits.changed(ls.relative_path(uri), params.text_document.version, document.source)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: CodedraftServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.deleted.pop(uri, None)
        ls.completions.forget(uri)
        ls.prefill.forget(uri)
        ls.next_edits.closed(ls.relative_path(uri))
        if (handle := pending.pop(uri, None)) is not None:
            handle.cancel()
        if ls.index is not None:
            try:
                await asyncio.to_thread(ls.index.close_buffer, ls.relative_path(uri))
            except (OSError, ValueError) as error:
                log.debug("closing buffer %s: %s", uri, error)


def _is_deletion(change: types.TextDocumentContentChangeEvent) -> bool:
    """An edit that removed text and inserted none (backspace, delete, cut)."""
    if isinstance(change, types.TextDocumentContentChangePartial):
        span = change.range
        return change.text == "" and (span.start.line, span.start.character) != (
            span.end.line,
            span.end.character,
        )
    return False


async def _sync_buffer(ls: CodedraftServer, uri: str) -> None:
    index = ls.index
    document = ls.open_document(uri)
    if index is None or document is None:
        return
    if len(document.source) > index.policy.max_file_bytes:
        return  # the index skips files this large on disk too (characters: at most the bytes)
    try:
        await asyncio.to_thread(index.update_buffer, ls.relative_path(uri), document.source)
    except (OSError, ValueError) as error:
        log.debug("buffer %s not indexed: %s", uri, error)
