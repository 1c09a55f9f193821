"""The language server's settings: typed, documented field by field, camelCase on the wire.

Settings arrive in ``initializationOptions`` and as the ``codedraft`` section of
``workspace/configuration``. A bad value is logged and replaced by its default; it never stops the
server.
"""

from __future__ import annotations

import dataclasses
import logging
import typing
from dataclasses import dataclass, field
from typing import Any

import cattrs

from indexer.skipping import DEFAULT_MAX_FILE_KIB

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DaemonSettings:
    address: str | None = None
    """Address of a running daemon (``unix:PATH`` or ``tcp:HOST:PORT``); unset: find or start one."""
    command: list[str] | None = None
    """Command that starts a daemon when none is running; unset: ``codedraft daemon`` of this install."""
    model: str | None = None
    """Target model (folder or GGUF file) for a daemon the server starts; unset: the daemon's default."""
    draft_model: str | None = None
    """Draft model for speculative decoding; unset: the default model's draft, if it has one."""
    device: str = "auto"
    """``auto``, ``cpu`` or ``cuda`` for a daemon the server starts."""
    token_file: str | None = None
    """File holding the daemon's token, when it listens on TCP with one."""
    tls: bool = False
    """Connect to the daemon over TLS, trusting the system's CA store (implied by ``tlsCa``)."""
    tls_ca: str | None = None
    """PEM file of the CA that signed the daemon's TLS certificate; set: connect over TLS trusting it."""


@dataclass(frozen=True)
class CompletionSettings:
    enabled: bool = True
    """Whether ghost-text completions are offered at all (``codedraft.toggle`` flips it)."""
    enabled_languages: list[str] = field(default_factory=lambda: ["*"])
    """LSP language ids that get completions; ``*`` means every language."""
    max_tokens: int = 64
    """Most tokens the model writes for one suggestion."""
    context_budget_tokens: int = 1024
    """Tokens of retrieved workspace context in a prompt."""
    prefix_budget_tokens: int = 1536
    """Tokens of the file before the cursor in a prompt (the nearest lines are kept)."""
    suffix_budget_tokens: int = 512
    """Tokens of the file after the cursor in a prompt."""
    debounce_ms: int = 75
    """Shortest wait after a keystroke before asking the model; it grows while the user types fast."""
    max_debounce_ms: int = 300
    """Longest wait after a keystroke."""
    timeout_ms: int = 5000
    """A suggestion that takes longer is abandoned (and the daemon stops decoding it)."""
    disable_in_comments: bool = True
    """No suggestions while the cursor is in a comment."""
    disable_in_strings: bool = False
    """No suggestions while the cursor is in a string literal."""
    temperature: float = 0.0
    """Sampling temperature; 0 is greedy (repeatable suggestions)."""
    speculation: str = "auto"
    """``auto``, ``off``, ``ngram`` or ``draft``."""
    prefill: bool = True
    """Compute the prompt at the cursor ahead of the first suggestion there, when a document opens or
    the cursor rests at a new place (the daemon's lowest priority; typing always comes first)."""
    prefill_delay_ms: int = 200
    """How long the cursor must rest at a new place before the prompt there is computed."""
    confidence: str = "auto"
    """Show a suggestion only when the model was sure enough of its first line, and its later lines
    only where they are sure enough too (``block_or_line.py``): ``auto`` at the operating points
    measured for the served model (strict defaults for a model nobody measured), ``off`` for every
    suggestion and whole blocks, or a target precision such as ``"0.5"`` (the share of shown lines
    that should be exactly right)."""
    cold_prompt_ms: int = 500
    """How long a suggestion may wait for its first token where the daemon has not computed the full
    prompt: a full prompt that would take longer (at the daemon's measured speed) is replaced there by
    the lines nearest the cursor until a prefill or a suggestion has computed it (``0``: always the
    full prompt)."""


@dataclass(frozen=True)
class AgentSettings:
    check_command: str | None = None
    """Command a fix must pass in the sandbox, e.g. ``pytest -x -q`` or ``ruff check``; unset: the
    diagnostics in range must disappear."""
    step_limit: int = 4
    """Most propose-check attempts for one fix."""
    time_limit_s: int = 120
    """Wall-clock limit for one fix, all attempts together."""


@dataclass(frozen=True)
class IndexSettings:
    enabled: bool = True
    """Whether the workspace is indexed for retrieval."""
    max_file_kb: int = DEFAULT_MAX_FILE_KIB
    """Files larger than this many KiB (1,024 bytes) are not indexed, as with ``codedraft index
    --max-file-kb`` (the same unit and default: both write the same index)."""
    exclude: list[str] = field(default_factory=list)
    """Extra directory names to skip everywhere in the workspace (``.gitignore`` is always honoured)."""


@dataclass(frozen=True)
class NextEditSettings:
    enabled: bool = True
    """Whether next-edit suggestions are offered (``textDocument/copilotInlineEdit`` answers no edits
    when off)."""
    model: bool = True
    """Whether the model is asked to rewrite the region at the cursor; off: only the renames the index
    finds and the edits by example (the user's edit repeated where it applies) are offered (they need
    no model call)."""
    timeout_ms: int = 5000
    """A model prediction that takes longer is abandoned (and the daemon stops decoding it)."""
    context_budget_tokens: int = 512
    """Tokens of retrieved workspace context in a next-edit prompt."""
    history_budget_tokens: int = 800
    """Tokens of recent edits (the newest that fit) in a next-edit prompt; the server keeps up to 3,000."""


@dataclass(frozen=True)
class Settings:
    daemon: DaemonSettings = field(default_factory=DaemonSettings)
    """How the server reaches the inference daemon."""
    completion: CompletionSettings = field(default_factory=CompletionSettings)
    """Ghost-text completion."""
    agent: AgentSettings = field(default_factory=AgentSettings)
    """Agent-verified fixes."""
    index: IndexSettings = field(default_factory=IndexSettings)
    """The workspace index."""
    next_edit: NextEditSettings = field(default_factory=NextEditSettings)
    """Next-edit suggestions."""


def camel_case(name: str) -> str:
    """``draft_model`` -> ``draftModel``."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def load_settings(raw: Any, base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Settings from a camelCase JSON object over ``base`` (default: the defaults).

    Returns the settings and one warning per value that was ignored (unknown key, wrong type, out of
    range); each ignored value keeps its previous value.
    """
    warnings: list[str] = []
    settings = _load(Settings, raw, base or Settings(), "codedraft", warnings)
    for warning in warnings:
        log.warning("setting ignored: %s", warning)
    return settings, warnings


def _load(cls: type, raw: Any, current: Any, path: str, warnings: list[str]) -> Any:
    if raw is None:
        return current
    if not isinstance(raw, dict):
        warnings.append(f"{path} must be an object, got {raw!r}")
        return current
    hints = typing.get_type_hints(cls)
    known = {camel_case(f.name): f for f in dataclasses.fields(cls)}
    for key in raw:
        if key not in known:
            warnings.append(f"{path}.{key} is not a setting")
    changes: dict[str, Any] = {}
    for wire_name, spec in known.items():
        if wire_name not in raw:
            continue
        where = f"{path}.{wire_name}"
        value, hint = raw[wire_name], hints[spec.name]
        if value == "" and _optional(hint):
            value = None  # editors send unset strings as ""
        if dataclasses.is_dataclass(hint):
            changes[spec.name] = _load(
                typing.cast(type, hint), value, getattr(current, spec.name), where, warnings
            )
            continue
        try:
            structured = _CONVERTER.structure(value, hint)
        except (cattrs.BaseValidationError, TypeError, ValueError):
            structured = _INVALID
        if structured is not _INVALID and _in_range(spec.name, structured):
            changes[spec.name] = structured
        else:
            warnings.append(f"{where} = {value!r} is not valid; keeping {getattr(current, spec.name)!r}")
    return dataclasses.replace(current, **changes)


def _optional(hint: Any) -> bool:
    return type(None) in typing.get_args(hint)


def _exactly(kind: type) -> Any:
    """A structure hook that takes a JSON value of ``kind`` as it is: no "5" for 5, no true for 1."""
    accepted = (int, float) if kind is float else kind

    def structure(value: Any, _: Any) -> Any:
        if isinstance(value, bool) is not (kind is bool) or not isinstance(value, accepted):
            raise TypeError(f"expected {kind.__name__}, got {value!r}")
        return value

    return structure


def _list(value: Any, hint: Any) -> list[Any]:
    if not isinstance(value, list):  # a string is iterable, but not a list of settings
        raise TypeError(f"expected a list, got {value!r}")
    (item,) = typing.get_args(hint)
    return [_CONVERTER.structure(element, item) for element in value]


# JSON values checked against the settings' field types; cattrs converts leniently by default ("5" to 5),
# and a setting of the wrong type should be reported, not guessed at.
_CONVERTER = cattrs.Converter()
for _kind in (bool, int, float, str):
    _CONVERTER.register_structure_hook(_kind, _exactly(_kind))
_CONVERTER.register_structure_hook_func(lambda hint: typing.get_origin(hint) is list, _list)
_INVALID = object()


_ZERO_ALLOWED = {"temperature", "cold_prompt_ms"}
_CHOICES = {"device": {"auto", "cpu", "cuda"}, "speculation": {"auto", "off", "ngram", "draft"}}


def _in_range(name: str, value: Any) -> bool:
    if name == "confidence":
        return value in ("auto", "off") or _fraction(value)
    if name in _CHOICES:
        return value in _CHOICES[name]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value >= 0 if name in _ZERO_ALLOWED else value > 0
    return True


def _fraction(value: str) -> bool:
    """A number in (0, 1] written as a string (a target precision)."""
    try:
        return 0.0 < float(value) <= 1.0
    except ValueError:
        return False
