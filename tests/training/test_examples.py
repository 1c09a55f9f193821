"""Corpus split, FIM splits and the packed example stream."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
import torch
from tokenizers import Tokenizer

from bench.corpus import SourceFile, collect_files, is_held_out, split_files
from training.examples import ExampleMix, ExampleStream, plain_rows, split_for_fim

TEXT = "import os\n\n\ndef f(x):\n    y = x + 1\n    return y\n\n\nclass C:\n    pass\n"


def test_fim_split_reassembles() -> None:
    for seed in range(500):
        prefix, middle, suffix = split_for_fim(random.Random(seed), TEXT)
        assert prefix + middle + suffix == TEXT, seed


def test_line_middles_leave_the_newline_in_the_suffix() -> None:
    for seed in range(200):
        prefix, middle, suffix = split_for_fim(random.Random(seed), TEXT)
        if (prefix == "" or prefix.endswith("\n")) and suffix.startswith("\n") and middle:
            assert not middle.endswith("\n")
            return
    pytest.fail("no whole-line middle in 200 draws")


def test_split_is_deterministic_and_disjoint(tiny_corpus: Path) -> None:
    files = collect_files(tiny_corpus)
    train, held = split_files(files, 40)
    assert {f.path for f in train}.isdisjoint(f.path for f in held)
    assert len(train) + len(held) == len(files) == 12
    assert [f.path for f in held] == [f.path for f in files if is_held_out(f.path, 40)]
    assert split_files(collect_files(tiny_corpus), 40)[1] == held


def test_stream_is_seeded_and_shaped(tiny_run: Path, tiny_corpus: Path) -> None:
    tokenizer = Tokenizer.from_file(str(tiny_run / "codedraft-base" / "tokenizer.json"))
    files = collect_files(tiny_corpus)
    first = ExampleStream(files, tokenizer, seq_len=64, seed=7).batch(3)
    again = ExampleStream(files, tokenizer, seq_len=64, seed=7).batch(3)
    other = ExampleStream(files, tokenizer, seq_len=64, seed=8).batch(3)
    assert first.shape == (3, 64) and first.dtype == torch.int64
    assert torch.equal(first, again)
    assert not torch.equal(first, other)


def test_stream_mixes_spm_psm_and_plain(tiny_run: Path, tiny_corpus: Path) -> None:
    tokenizer = Tokenizer.from_file(str(tiny_run / "codedraft-base" / "tokenizer.json"))
    stream = ExampleStream(collect_files(tiny_corpus), tokenizer, seq_len=256, seed=0)
    texts = [stream.example_text() for _ in range(400)]
    spm = sum(
        t.lstrip().startswith("<|fim_suffix|>") or "\n<|fim_suffix|>" in t.split("<|fim_prefix|>")[0]
        for t in texts
        if "<|fim_middle|>" in t
    )
    fim = sum("<|fim_middle|>" in t for t in texts)
    snippets = sum(t.count("<|file_sep|>") >= 2 for t in texts)
    assert 0.65 < fim / 400 < 0.85  # plain_rate 0.2, rename_rate 0.06
    assert 0.35 < spm / fim < 0.65
    assert snippets > 20


def test_plain_rows_cover_files_in_order(tiny_run: Path) -> None:
    tokenizer = Tokenizer.from_file(str(tiny_run / "codedraft-base" / "tokenizer.json"))
    file = SourceFile("a/b.py", "x = 1\n" * 200)
    rows = plain_rows([file], tokenizer, seq_len=16, max_rows=3)
    assert len(rows) == 3 and all(r.shape == (1, 16) for r in rows)
    ids = tokenizer.encode("<|file_sep|>a/b.py\n" + file.text + "<|endoftext|>").ids
    assert torch.cat(rows, dim=1)[0].tolist() == ids[:48]


def test_rows_hold_whole_fim_examples(tiny_run: Path, tiny_corpus: Path) -> None:
    """A FIM example is never cut at a row boundary: every middle marker in a row has its prompt
    markers before it and its end of text after it, in the same row."""
    tokenizer = Tokenizer.from_file(str(tiny_run / "codedraft-base" / "tokenizer.json"))
    stream = ExampleStream(collect_files(tiny_corpus), tokenizer, seq_len=256, seed=3)
    ids = {
        name: tokenizer.token_to_id(name) for name in ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>")
    }
    eos = tokenizer.token_to_id("<|endoftext|>")
    middles = 0
    for row in stream.batch(40).tolist():
        for i, token in enumerate(row):
            if token == ids["<|fim_middle|>"]:
                middles += 1
                before = row[:i][::-1]
                start = before.index(eos) if eos in before else len(before)
                assert ids["<|fim_prefix|>"] in before[:start] and ids["<|fim_suffix|>"] in before[:start]
                assert eos in row[i:]
    assert middles > 10


def test_rename_by_length_draws_longer_functions(tiny_run: Path, tiny_corpus: Path) -> None:
    """Weighting the rename examples' functions by length moves their mean length up (refactors copy
    long functions; most functions are short)."""
    tokenizer = Tokenizer.from_file(str(tiny_run / "codedraft-base" / "tokenizer.json"))
    files = collect_files(tiny_corpus)

    def mean_lines(by_length: bool) -> float:
        mix = ExampleMix(plain_rate=0.0, rename_rate=1.0, rename_by_length=by_length)
        stream = ExampleStream(files, tokenizer, seq_len=2048, seed=5, mix=mix)
        texts = [stream.example_text() for _ in range(300)]
        functions = [m.group(1) for t in texts if (m := re.match(r"(.*?)\n\n# .*`.*`.*:\n", t, re.S))]
        assert len(functions) > 200
        return sum(f.count("\n") + 1 for f in functions) / len(functions)

    assert mean_lines(True) > 1.3 * mean_lines(False)
