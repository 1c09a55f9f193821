"""One refactor or fix from request to proposed edit, streaming the model's reply to the editor
(``reply_stream.py``). The result is an edit that needs the user's confirmation; nothing is written
here.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass

from lsprotocol import types

from indexer.languages import language_for_path
from indexer.positions import utf16_length
from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.syntax import language_spec
from lsp_server.daemon_supervisor import RequestRejected
from lsp_server.edit_target import selected_lines
from lsp_server.editor_host import EditorHost
from lsp_server.rewrite.prompts import CONTEXT_LINES, RewriteTask, rewrite_messages
from lsp_server.rewrite.proposal_check import EditOutsideWorkspace, Proposal, proposal_problem
from lsp_server.rewrite.reply import code_from_reply, keep_indentation
from lsp_server.rewrite.workspace_edit import annotated_edit, check_inside_workspace

MAX_REWRITE_TOKENS = 1024
REWRITE_TIMEOUT_S = 300.0


@dataclass
class RewriteResult:
    """The proposed edit, or the reason there is none; ``reply`` is the model's whole text."""

    id: str
    edit: types.WorkspaceEdit | None = None
    reply: str = ""
    error: str | None = None


async def run_rewrite(
    host: EditorHost, uri: str, span: types.Range, instruction: str, diagnostics: list[str], title: str
) -> RewriteResult:
    """Asks the model to rewrite the whole lines of ``span`` in ``uri`` and returns the edit."""
    result = RewriteResult(id=uuid.uuid4().hex)
    document = host.open_document(uri)
    if document is None:
        result.error = f"{uri} is not open in the editor"
        return result
    try:
        check_inside_workspace(uri, host.workspace_root)
    except EditOutsideWorkspace as error:
        result.error = str(error)
        return result
    eol = "\r\n" if "\r\n" in document.source else "\n"
    lines = [line.removesuffix("\r") for line in document.source.split("\n")]
    first, last = selected_lines(span)
    if not 0 <= first <= last < len(lines):
        result.error = f"range {first + 1}-{last + 1} is outside the document ({len(lines)} lines)"
        return result
    selected = "\n".join(lines[first : last + 1])
    task = RewriteTask(
        path=host.relative_path(uri),
        language=document.language_id or "",
        before="\n".join(lines[max(0, first - CONTEXT_LINES) : first]),
        selected=selected,
        after="\n".join(lines[last + 1 : last + 1 + CONTEXT_LINES]),
        instruction=instruction,
        diagnostics=diagnostics,
    )
    request = pb.GenerateRequest(
        request_id=result.id,
        session_id=f"{uri}#rewrite",
        chat=pb.ChatMessages(messages=rewrite_messages(task)),
        sampling=pb.SamplingParams(temperature=0.0, max_tokens=MAX_REWRITE_TOKENS),
    )
    try:
        result.reply = await _stream_reply(host, request, title, result.id)
    except (ConnectionError, TimeoutError, RequestRejected) as error:
        result.error = f"the model could not answer: {error or 'timed out'}"
        return result
    code = code_from_reply(result.reply)
    if code is None:
        result.error = "the model's reply held no code"
        return result
    code = keep_indentation(selected, code)
    if code == selected:
        result.error = "the model proposed no change"
        return result
    after = "\n".join([*lines[:first], code, *lines[last + 1 :]])
    language = language_spec(document.language_id) or language_for_path(task.path)
    # two whole-file parses and a tag extraction: off the server's event loop
    proposal = Proposal("\n".join(lines), after, language, instruction, (first, last))
    problem = await asyncio.to_thread(proposal_problem, proposal)
    if problem is not None:
        result.error = f"{problem}; not offered, ask again or reword the request"
        return result
    whole_lines = types.Range(
        start=types.Position(line=first, character=0),
        end=types.Position(line=last, character=utf16_length(lines[last])),
    )
    result.edit = annotated_edit(
        uri, document.version, whole_lines, code.replace("\n", eol), title, instruction
    )
    return result


async def _stream_reply(host: EditorHost, request: pb.GenerateRequest, title: str, token: str) -> str:
    stream = await host.reply_stream(token, title)
    pieces: list[str] = []
    try:
        async for chunk in host.stream_generate(request, REWRITE_TIMEOUT_S):
            if chunk.text_delta:
                pieces.append(chunk.text_delta)
                stream.text(chunk.text_delta, progress=f"{sum(map(len, pieces))} characters")
    finally:
        stream.end()
    return "".join(pieces)
