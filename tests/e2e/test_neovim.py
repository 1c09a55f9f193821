"""A real editor as the LSP client: headless Neovim asks codedraft for completions in a Python buffer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.lsp_harness import CODEDRAFT

LUA = r"""
local out = vim.env.CODEDRAFT_TEST_OUT
local function finish(result)
  vim.fn.writefile({vim.fn.json_encode(result)}, out)
  vim.cmd("qa!")
end
vim.cmd("edit " .. vim.fn.fnameescape(vim.env.CODEDRAFT_TEST_FILE))
local bufnr = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start_client({
  name = "codedraft",
  cmd = {vim.env.CODEDRAFT_BIN, "lsp", "--daemon", vim.env.CODEDRAFT_DAEMON},
  root_dir = vim.env.CODEDRAFT_WORKSPACE,
})
vim.lsp.buf_attach_client(bufnr, client_id)
local client = vim.lsp.get_client_by_id(client_id)
if not vim.wait(30000, function() return client.initialized end, 50) then
  finish({error = "not initialized"})
end
local params = {
  textDocument = {uri = vim.uri_from_bufnr(bufnr)},
  position = {line = 2, character = 4},
}
local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/completion", params, 60000)
local items = {}
for _, response in pairs(responses or {}) do
  local result = response.result or {}
  for _, item in ipairs(result.items or result) do
    table.insert(items, {label = item.label, newText = item.textEdit and item.textEdit.newText})
  end
end
finish({items = items, capabilities = client.server_capabilities.completionProvider ~= nil})
"""


@pytest.mark.skipif(shutil.which("nvim") is None, reason="neovim is not installed (make test installs it)")
def test_neovim_gets_a_codedraft_completion_item(tmp_path: Path, scripted_daemon: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    source = workspace / "calc.py"
    source.write_text("def total_of(values):\n    total = sum(values)\n    \n")
    result = _run_neovim(tmp_path, LUA, source, scripted_daemon, timeout_s=120)
    assert result.get("capabilities") is True, result
    assert result["items"] == [{"label": "return total", "newText": "return total"}]


NEXT_EDIT_LUA = r"""
local out = vim.env.CODEDRAFT_TEST_OUT
local function finish(result)
  vim.fn.writefile({vim.fn.json_encode(result)}, out)
  vim.cmd("qa!")
end
vim.cmd("edit " .. vim.fn.fnameescape(vim.env.CODEDRAFT_TEST_FILE))
local bufnr = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start_client({
  name = "codedraft",
  cmd = {vim.env.CODEDRAFT_BIN, "lsp", "--daemon", vim.env.CODEDRAFT_DAEMON},
  root_dir = vim.env.CODEDRAFT_WORKSPACE,
  init_options = {nextEdit = {model = false}, completion = {prefill = false}},
})
vim.lsp.buf_attach_client(bufnr, client_id)
local client = vim.lsp.get_client_by_id(client_id)
if not vim.wait(30000, function() return client.initialized end, 50) then
  finish({error = "not initialized"})
end
local ok, failure = pcall(function()
local uri = vim.uri_from_bufnr(bufnr)
local offered = {}
-- The user renames the parameter "value" to "amount" at the definition.
vim.api.nvim_buf_set_text(bufnr, 0, 10, 0, 15, {"amount"})
for _ = 1, 5 do
  local params = {
    textDocument = {uri = uri, version = vim.lsp.util.buf_versions[bufnr]},
    position = {line = 0, character = 16},
    context = {triggerKind = 2},
  }
  local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/copilotInlineEdit", params, 30000)
  local edits = {}
  for _, response in pairs(responses or {}) do
    edits = (response.result or {}).edits or {}
  end
  if #edits == 0 then break end
  local edit = edits[1]
  table.insert(offered, {line = edit.range.start.line, text = edit.text})
  client.notify("textDocument/didShowInlineEdit", {item = {command = edit.command}})
  vim.lsp.util.apply_text_edits({{range = edit.range, newText = edit.text}}, bufnr, "utf-16")
  local accept = {command = edit.command.command, arguments = edit.command.arguments}
  client.request_sync("workspace/executeCommand", accept, 10000, bufnr)
end
-- Then "factor" to "ratio", and the rest through the code action, as Helix or Emacs would.
vim.api.nvim_buf_set_text(bufnr, 0, 18, 0, 24, {"ratio"})
local actions = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", {
  textDocument = {uri = uri},
  range = {start = {line = 0, character = 22}, ["end"] = {line = 0, character = 22}},
  context = {diagnostics = {}, triggerKind = 1},
}, 30000)
local titles = {}
for _, response in pairs(actions or {}) do
  for _, action in ipairs(response.result or {}) do
    table.insert(titles, action.title)
    if action.title == "Apply predicted edit" then
      vim.lsp.util.apply_workspace_edit(action.edit, "utf-16")
    end
  end
end
finish({offered = offered, titles = titles, lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)})
end)
if not ok then finish({error = tostring(failure)}) end
"""


@pytest.mark.skipif(shutil.which("nvim") is None, reason="neovim is not installed (make test installs it)")
def test_neovim_steps_through_a_predicted_rename(tmp_path: Path, scripted_daemon: str) -> None:
    """Neovim speaks ``textDocument/copilotInlineEdit`` as copilot-lsp does, and the code action."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    source = workspace / "scale.py"
    source.write_text("def scale(value, factor):\n    doubled = value * factor\n    return doubled + value\n")
    result = _run_neovim(tmp_path, NEXT_EDIT_LUA, source, scripted_daemon, timeout_s=60)
    assert "error" not in result, result
    assert result["offered"] == [{"line": 1, "text": "amount"}, {"line": 2, "text": "amount"}]
    assert result["titles"] == ["Apply predicted edit"]
    assert result["lines"] == [
        "def scale(amount, ratio):",
        "    doubled = amount * ratio",
        "    return doubled + amount",
    ]


def _run_neovim(tmp_path: Path, lua: str, source: Path, daemon: str, timeout_s: int) -> dict[str, Any]:
    """Runs ``lua`` in a headless Neovim editing ``source`` (its folder the workspace) against
    ``codedraft lsp --daemon DAEMON``, and returns what the script wrote with ``finish``."""
    script = tmp_path / "test.lua"
    script.write_text(lua)
    out = tmp_path / "result.json"
    env = {
        **os.environ,
        "CODEDRAFT_TEST_OUT": str(out),
        "CODEDRAFT_TEST_FILE": str(source),
        "CODEDRAFT_BIN": CODEDRAFT,
        "CODEDRAFT_DAEMON": daemon,
        "CODEDRAFT_WORKSPACE": str(source.parent),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    subprocess.run(
        ["nvim", "--headless", "--clean", "-c", f"luafile {script}"],
        env=env,
        timeout=timeout_s,
        check=False,
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )
    result: dict[str, Any] = json.loads(out.read_text())
    return result
