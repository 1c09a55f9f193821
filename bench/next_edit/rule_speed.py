"""``codedraft bench next-edit --rule-speed``: how long learning a rule from an edit and finding where
it applies takes on a 5,000-line file (issue 39's target: 20 ms at p95 on this CPU).

Each mined repeat case's file (``repeat_cases_*.json``) is set in the middle of the other cases'
files, up to ``LINES`` lines of real Python, and its group's first block is the user's edit. Timed:
``RepeatedEdits.propose`` with the file's tree held from before the edit (the server keeps a
document's tree as it is edited; the edited tree is re-parsed incrementally inside the timing), so
the figure is learning, matching and the parse check of the nearest sites. Timed separately: the
same with nothing held (two full parses first), as for the first edit of a document just opened.
"""

from __future__ import annotations

import os
import time

from bench.next_edit.cases import Case, apply_blocks, load_cases
from bench.next_edit.mine_repeats import REPOSITORIES, cases_file, repeated_group
from bench.next_edit.scoring import percentile
from lsp_server.completion.syntax import language_spec
from lsp_server.next_edit.diffs import FileEdit
from lsp_server.next_edit.repeated_edits import RepeatedEdits

LINES = 5_000
ROUNDS = 3


def _file_around(case: Case, others: list[Case]) -> tuple[str, str]:
    """(before, after) of a file of about ``LINES`` lines with ``case``'s file in its middle."""
    group = repeated_group(case.before, case.after)
    assert group is not None
    edited = apply_blocks(case.before, group[0][:1])
    head: list[str] = []
    tail: list[str] = []
    lines = case.before.count("\n")
    for index, other in enumerate(o for o in others if o.name != case.name):
        (head if index % 2 else tail).append(other.before)
        lines += other.before.count("\n")
        if lines >= LINES:
            break
    prefix, suffix = "".join(head), "".join(tail)
    return prefix + case.before + suffix, prefix + edited + suffix


def timings() -> tuple[list[float], list[float], int]:
    """(held, cold) times in ms over every repeat case and ``ROUNDS`` rounds, and the file's lines."""
    cases = [case for name in REPOSITORIES for case in load_cases(cases_file(name))]
    repeats = [case for case in cases if case.kind == "repeat"]
    spec = language_spec("python")
    assert spec is not None
    held: list[float] = []
    cold: list[float] = []
    lines = 0
    for _ in range(ROUNDS):
        for case in repeats:
            before, after = _file_around(case, cases)
            lines = max(lines, before.count("\n"))
            edit = FileEdit("big.py", before, after, 0.0)
            rules = RepeatedEdits()
            started = time.perf_counter()
            rules.propose(spec, edit)
            cold.append((time.perf_counter() - started) * 1000)
            rules = RepeatedEdits()
            rules.parse_ahead("big.py", spec, before)
            started = time.perf_counter()
            rules.propose(spec, edit)
            held.append((time.perf_counter() - started) * 1000)
    return held, cold, lines


def report_rule_speed() -> None:
    """Prints the timings' p50 and p95, with the load average around them."""
    load = os.getloadavg()[0]
    held, cold, lines = timings()
    print(f"rule learning + matching on files of up to {lines} lines ({len(held)} edits)")
    for label, values in (("tree held (as while editing)", held), ("nothing held (two full parses)", cold)):
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        print(f"  {label:<32} p50 {p50:.1f} ms  p95 {p95:.1f} ms  max {max(values):.1f} ms")
    print(f"load average (1 min): {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end")
