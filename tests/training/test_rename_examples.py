"""Rename examples: the function, the announcement, then the same function with one name replaced."""

from __future__ import annotations

import random
import re

from training.rename_examples import function_sources, rename_training_text

SOURCE = """
import os


def join_all(parts, sep):
    result = []
    for part in parts:
        result.append(os.fspath(part))
    return sep.join(result)


def short(x):
    return x
"""


def test_function_sources_are_dedented_and_sized() -> None:
    found = function_sources(SOURCE)
    assert found == [
        "def join_all(parts, sep):\n    result = []\n    for part in parts:\n"
        "        result.append(os.fspath(part))\n    return sep.join(result)"
    ]
    assert function_sources("def broken(:\n") == []


def test_rename_replaces_every_whole_word_occurrence() -> None:
    (function,) = function_sources(SOURCE)
    for seed in range(50):
        text = rename_training_text(random.Random(seed), function, ["other_name", "join_all"])
        assert text is not None and text.endswith("\n<|endoftext|>")
        original, rest = text.split("\n\n", 1)
        announcement, renamed = rest.removesuffix("\n<|endoftext|>").split("\n", 1)
        assert original == function
        old, new = re.findall(r"`([^`]+)`", announcement)
        assert old != new and new not in re.findall(r"\w+", function)
        assert renamed == re.sub(rf"\b{old}\b", new, function)
        assert function.count(old) >= 2


def test_no_rename_without_a_repeated_name() -> None:
    assert rename_training_text(random.Random(0), "def f(a):\n    return b", []) is None
