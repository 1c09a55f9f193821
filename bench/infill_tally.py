"""The running figures of one corpus of ``codedraft bench model [--model PATH]``, readable after any
case, so that a run cut short still leaves its figures (``--json`` is rewritten every 10 cases)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.cursor_cases import CursorCase

MODES = ("healing", "no_healing")
BASELINES = ("empty", "above")


@dataclass
class InfillTally:
    """Hits per variant (the model with and without healing, the baselines) over the cases so far,
    and one record per case: what was expected, what the model wrote and what the user was shown."""

    exact: dict[str, int] = field(default_factory=lambda: dict.fromkeys((*MODES, *BASELINES), 0))
    exact_raw: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MODES, 0))
    parses: dict[str, int] = field(default_factory=lambda: dict.fromkeys((*MODES, *BASELINES), 0))
    by_kind: dict[str, list[int]] = field(default_factory=dict)
    first_token_s: dict[str, float] = field(default_factory=lambda: dict.fromkeys(MODES, 0.0))
    prompt_tokens: int = 0
    snippets: int = 0  # retrieved snippets sent, over all asked cases
    not_asked: int = 0
    records: list[dict[str, Any]] = field(default_factory=list)

    def add(
        self,
        case: CursorCase,
        shown: dict[str, str | None],
        raw: dict[str, str],
        parses: dict[str, bool],
        asked: bool,
        confidence: dict[str, float] | None = None,
    ) -> None:
        """One case: ``shown`` per variant (None: the baseline does not apply), the model's first
        line before post-processing per mode, whether the file parses as before per variant, and how
        sure the model was of its first line (healing on; None when not asked)."""
        self.not_asked += not asked
        for name, guess in shown.items():
            hit = guess is not None and guess.rstrip() == case.middle.rstrip()
            self.exact[name] += hit
            self.parses[name] += parses[name]
            if name == "healing":
                self.by_kind.setdefault(case.kind, []).append(int(hit))
        for mode in MODES:
            self.exact_raw[mode] += raw[mode].rstrip() == case.middle.rstrip()
        self.records.append(
            {
                "path": case.path,
                "kind": case.kind,
                "line": case.line,
                "expected": case.middle,
                "asked": asked,
                **{f"{m}_model": raw[m] for m in MODES},
                **{f"{m}_shown": shown[m] for m in MODES},
                "shown_parses": parses["healing"],
                "confidence": confidence,
            }
        )

    def figures(self) -> dict[str, Any]:
        """The corpus's figures over the cases added so far."""
        n = len(self.records)
        asked = n - self.not_asked
        rate = lambda hits: round(hits / n, 4) if n else float("nan")  # noqa: E731
        return {
            "cases": n,
            "cursor_kinds": {kind: len(hits) for kind, hits in sorted(self.by_kind.items())},
            "not_asked": self.not_asked,
            "exact_match": {name: rate(hits) for name, hits in self.exact.items()},
            "exact_match_before_postprocessing": {name: rate(hits) for name, hits in self.exact_raw.items()},
            "exact_match_healing_by_kind": {
                kind: round(sum(hits) / len(hits), 4) for kind, hits in sorted(self.by_kind.items())
            },
            "parses": {name: rate(hits) for name, hits in self.parses.items()},
            "mean_prompt_tokens": round(self.prompt_tokens / asked, 1) if asked else None,
            "mean_snippets": round(self.snippets / asked, 2) if asked else None,
            "mean_first_token_ms": {
                m: round(s / asked * 1000, 1) if asked else None for m, s in self.first_token_s.items()
            },
            "case_results": self.records,
        }
