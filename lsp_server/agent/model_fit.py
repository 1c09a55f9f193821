"""What the fix agent asks of the served model, by its size and by what ``codedraft bench fix`` measured.

Two rules, each owned here:

* **The reply form.** A small model asked for search/replace blocks often answers with the whole
  file or prose instead (SmolLM2-135M in ``codedraft bench fix``: of 12 replies, 5 held no
  edit that could be read), in up to 1,024 tokens. Asked for the one corrected line, a reply is a
  line, or a function whose one changed line is taken. So a fix of one line asks a model under
  :data:`SMALL_MODEL_PARAMETERS` for that line alone; larger models, and fixes of a selection, get
  the search/replace form, which can also change other lines. The threshold is a guess, not a
  measurement: the bench has run only models under it so far.
* **Models known to fix nothing.** ``fix_bench_results.json`` holds, per model (its name and
  parameter count, as ``GetModelInfo`` gives them), the bench's fixed count out of its cases. A
  model that fixed none is not asked to try: the editor says so once instead of running attempts
  that cannot pass. A stored measurement rather than a parameter threshold, because size alone does
  not decide (a code model fixes what a chat model of the same size does not), and a model that was
  never measured is always tried.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from lsp_server.agent.edits import Target

SMALL_MODEL_PARAMETERS = 1_000_000_000
"""Below this many parameters a one-line fix asks for the corrected line only."""

RESULTS_PATH = Path(__file__).with_name("fix_bench_results.json")


def reply_form(parameters: int, target: Target) -> str:
    """``"line"`` (the corrected line alone) for a one-line target and a small model, else ``"blocks"``.

    ``parameters`` is 0 when the daemon did not say: the form every model can be asked for is kept.
    """
    small = 0 < parameters < SMALL_MODEL_PARAMETERS
    return "line" if small and target.first == target.last else "blocks"


@cache
def _results(path: Path) -> dict[str, Any]:
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded.get("models", {}) if isinstance(loaded, dict) else {}


def model_key(name: str, parameters: int) -> str:
    """How a model is named in the stored results: its name and parameter count."""
    return f"{name} ({parameters} parameters)"


def cannot_fix(name: str, parameters: int, path: Path | None = None) -> str | None:
    """Why the agent should not try with this model (it fixed none of the bench's bugs), or None;
    ``path``: the stored results (default :data:`RESULTS_PATH`)."""
    measured = _results(path or RESULTS_PATH).get(model_key(name, parameters))
    if not isinstance(measured, dict) or measured.get("fixed") != 0:
        return None
    return (
        f"the served model, {name}, fixed none of the {measured.get('cases')} one-line bugs of "
        f"`codedraft bench fix` (measured {measured.get('measured')}), so no fix was attempted; "
        "serve a larger model (codedraft.daemon.model) to use Fix with codedraft"
    )


def record(name: str, parameters: int, figures: dict[str, Any], path: Path | None = None) -> None:
    """Stores one bench result (``fixed``, ``cases``, ``steps_limit``, ``measured``) for a model."""
    path = path or RESULTS_PATH
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stored = {}
    stored.setdefault("models", {})[model_key(name, parameters)] = figures
    path.write_text(json.dumps(stored, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    _results.cache_clear()
