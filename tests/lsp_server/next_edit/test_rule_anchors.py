"""The word a rule's sites are searched from is the same in every process: a replay's figures must
not depend on which process runs a case (string hashes, and so a set's order, differ between
processes unless PYTHONHASHSEED pins them)."""

from __future__ import annotations

import os
import subprocess
import sys

from lsp_server.next_edit.edit_pattern import Branch, Hole, Leaf
from lsp_server.next_edit.edit_rule import EditRule

WORDS = (b"gamma", b"delta", b"alpha", b"omega", b"sigma", b"kappa", b"zeta", b"beta", b"iota")

_PRINT_ANCHORS = (
    "from lsp_server.next_edit.edit_pattern import Branch, Hole, Leaf\n"
    "from lsp_server.next_edit.edit_rule import EditRule\n"
    f"words = {WORDS!r}\n"
    "rule = EditRule(Branch('call', tuple(Leaf('identifier', w) for w in words) + (Hole(0),)), (0,))\n"
    "print(rule.anchors())\n"
)


def _rule() -> EditRule:
    return EditRule(Branch("call", (*(Leaf("identifier", word) for word in WORDS), Hole(0))), (0,))


def test_anchors_run_longest_first_and_words_of_one_length_in_byte_order() -> None:
    assert _rule().anchors() == [
        b"alpha",
        b"delta",
        b"gamma",
        b"kappa",
        b"omega",
        b"sigma",
        b"beta",
        b"iota",
        b"zeta",
    ]


def test_anchors_are_the_same_whatever_the_process_s_string_hashes() -> None:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    outputs = set()
    for seed in ("1", "2", "3", "4"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": root}
        command = [sys.executable, "-c", _PRINT_ANCHORS]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True, cwd=root)
        outputs.add(done.stdout)
    assert outputs == {repr(_rule().anchors()) + "\n"}
