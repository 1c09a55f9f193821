"""Training examples: plain windows and fill-in-the-middle splits (PSM and SPM), packed into rows.

Splits are made on characters and each piece is tokenized on its own (the special tokens separate
them), exactly as a prompt built at an editor cursor is tokenized, so token boundaries at the cursor
look the same in training and in use.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from tokenizers import Tokenizer

from bench.corpus import SourceFile
from training.example_text import CODEDRAFT_FIM, EOS, fim_training_text, plain_training_text
from training.rename_examples import function_sources, rename_training_text

_IDENTIFIER = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{3,}\b")
_SNIPPET_LINES = 14
_SNIPPET_MAX_CHARS = 500


@dataclass(frozen=True)
class ExampleMix:
    """Probabilities of each kind of example; the rest of the FIM mass after SPM is PSM.

    The defaults are the long-context phase's; ``SHORT_CONTEXT_MIX`` is the first phases' mix.
    """

    plain_rate: float = 0.2
    rename_rate: float = 0.06  # a function copied with one symbol renamed (see rename_examples)
    spm_rate: float = 0.5  # of FIM examples
    snippet_rate: float = 0.35  # of FIM examples: add <|file_sep|> snippets from the same package
    path_rate: float = 0.7  # of examples without snippets: name the current file
    full_window_rate: float = 0.5  # the others use a window of 10-100 % of the longest
    line_middle_rate: float = 0.45  # FIM middles of whole lines
    single_line_rate: float = 0.7  # of whole-line middles: one line (else 2-6)
    rest_of_line_rate: float = 0.25  # from a random column to the line's end; the rest: random spans
    whole_examples: bool = True  # rows never cut a FIM or rename example (else: cut anywhere)
    rename_by_length: bool = False  # draw a rename example's function in proportion to its length


SHORT_CONTEXT_MIX = ExampleMix(
    plain_rate=0.3,
    rename_rate=0.0,
    full_window_rate=1.0,
    line_middle_rate=0.4,
    single_line_rate=0.6,
    whole_examples=False,
)


def _window(rng: random.Random, lines: list[str], max_chars: int) -> tuple[int, int]:
    """A run of whole lines [start, end) of at most ``max_chars`` characters (at least one line)."""
    start = 0 if rng.random() < 0.15 else rng.randrange(len(lines))
    end, size = start, 0
    while end < len(lines) and (end == start or size + len(lines[end]) <= max_chars):
        size += len(lines[end])
        end += 1
    return start, end


def split_for_fim(rng: random.Random, text: str, mix: ExampleMix | None = None) -> tuple[str, str, str]:
    """(prefix, middle, suffix) of ``text``: whole lines, the rest of a line, or a random span.

    Whole-line and rest-of-line middles leave the newline in the suffix, like a cursor on that line.
    """
    mix = mix or ExampleMix()
    lines = text.splitlines(keepends=True)
    mode = rng.random()
    if mode < mix.line_middle_rate + mix.rest_of_line_rate:
        i = rng.randrange(len(lines))
        start = sum(len(line) for line in lines[:i])
        if mode < mix.line_middle_rate:
            count = 1 if rng.random() < mix.single_line_rate else rng.randint(2, 6)
            end = start + sum(len(line) for line in lines[i : i + count])
        else:
            end = start + len(lines[i])
            start += rng.randrange(len(lines[i].rstrip("\n")) + 1)
        if text[end - 1 : end] == "\n" and end > start:
            end -= 1
        return text[:start], text[start:end], text[end:]
    a, b = sorted(rng.randrange(len(text) + 1) for _ in range(2))
    b = min(b, a + max(1, len(text) // 3))  # keep most of the window as context
    return text[:a], text[a:b], text[b:]


def _special_id(tokenizer: Tokenizer, token: str) -> int:
    token_id = tokenizer.token_to_id(token)
    if token_id is None:
        raise ValueError(f"the tokenizer has no {token} token")
    return int(token_id)


class PackageIndex:
    """Files grouped by package, to draw context snippets that share identifiers with the middle."""

    def __init__(self, files: list[SourceFile]) -> None:
        self._by_package: dict[str, list[SourceFile]] = defaultdict(list)
        for file in files:
            self._by_package[file.package].append(file)

    def snippets(self, rng: random.Random, file: SourceFile, middle: str) -> list[tuple[str, str]]:
        """One or two windows from other files of ``file``'s package, preferring ones naming an
        identifier of ``middle`` (as a retriever would find them)."""
        others = [f for f in self._by_package[file.package] if f.path != file.path]
        if not others:
            return []
        names = set(_IDENTIFIER.findall(middle))
        result = []
        for other in rng.sample(others, min(len(others), rng.randint(1, 2))):
            lines = other.text.splitlines(keepends=True)
            hits = [
                i for i, line in enumerate(lines) if names and names.intersection(_IDENTIFIER.findall(line))
            ]
            centre = rng.choice(hits) if hits else rng.randrange(len(lines))
            start = max(0, centre - _SNIPPET_LINES // 3)
            text = "".join(lines[start : start + _SNIPPET_LINES])[:_SNIPPET_MAX_CHARS].rstrip("\n")
            result.append((other.path, text))
        return result


class ExampleStream:
    """An endless, seeded stream of token rows (B, T) packed from examples of a list of files.

    Files are drawn with probability proportional to their length, so every character of the corpus
    is about equally likely to be seen. Rows hold whole FIM and rename examples (one cut in two would
    teach a middle without its suffix); the space an example does not fit in is filled with the start
    of a plain window, which loses nothing by being cut.
    """

    def __init__(
        self,
        files: list[SourceFile],
        tokenizer: Tokenizer,
        seq_len: int,
        seed: int,
        mix: ExampleMix | None = None,
        chars_per_token: float = 3.6,
    ) -> None:
        if not files:
            raise ValueError("no training files")
        self._files = files
        self._weights = [len(f.text) for f in files]
        self._lines = [f.text.splitlines(keepends=True) for f in files]
        self._functions: dict[int, list[str]] = {}
        self._tokenizer = tokenizer
        self._seq_len = seq_len
        self._rng = random.Random(seed)
        self._mix = mix or ExampleMix()
        self._packages = PackageIndex(files)
        self._max_chars = int(seq_len * chars_per_token * 0.85)
        self.middle_id = _special_id(tokenizer, CODEDRAFT_FIM.middle)
        self.end_id = _special_id(tokenizer, EOS)
        self._pending: list[int] = []  # whole examples: one that did not fit in the previous row
        self._buffer: list[int] = []  # cut examples: tokens left over after the previous batch

    def _window_chars(self) -> int:
        if self._mix.full_window_rate >= 1.0 or self._rng.random() < self._mix.full_window_rate:
            return self._max_chars
        return int(self._max_chars * self._rng.uniform(0.1, 1.0))

    def _plain(self, index: int) -> str:
        lines = self._lines[index]
        start, end = _window(self._rng, lines, self._window_chars())
        path = self._files[index].path if start == 0 and self._rng.random() < self._mix.path_rate else None
        return plain_training_text("".join(lines[start:end]), path, end == len(lines))

    def _rename(self, index: int) -> str | None:
        if index not in self._functions:
            self._functions[index] = function_sources(self._files[index].text)
        functions = [f for f in self._functions[index] if len(f) * 2 < self._max_chars]
        if not functions:
            return None
        names = _IDENTIFIER.findall(self._files[index].text[:20_000])
        if self._mix.rename_by_length:  # long functions: the long-range copies a refactor needs
            function = self._rng.choices(functions, weights=[len(f) for f in functions])[0]
        else:
            function = self._rng.choice(functions)
        return rename_training_text(self._rng, function, names)

    def _fim(self, index: int) -> str:
        rng, mix, file = self._rng, self._mix, self._files[index]
        snippet_budget = _SNIPPET_MAX_CHARS * 2 if rng.random() < mix.snippet_rate else 0
        start, end = _window(rng, self._lines[index], max(200, self._window_chars() - snippet_budget))
        prefix, middle, suffix = split_for_fim(rng, "".join(self._lines[index][start:end]), mix)
        snippets = self._packages.snippets(rng, file, middle) if snippet_budget else []
        path = file.path if snippets or rng.random() < mix.path_rate else None
        spm = rng.random() < mix.spm_rate
        return fim_training_text(prefix, middle, suffix, spm=spm, path=path, snippets=snippets)

    def _example(self) -> tuple[str, bool]:
        """One example as text with special tokens, and whether it may be cut at a row's end."""
        index = self._rng.choices(range(len(self._files)), weights=self._weights)[0]
        kind = self._rng.random()
        if kind < self._mix.plain_rate:
            return self._plain(index), True
        if kind < self._mix.plain_rate + self._mix.rename_rate and (text := self._rename(index)):
            return text, False
        return self._fim(index), False

    def example_text(self) -> str:
        """One example as text with special tokens."""
        return self._example()[0]

    def _row(self) -> list[int]:
        row, self._pending = self._pending, []
        while len(row) < self._seq_len:
            text, cuttable = self._example()
            ids = self._tokenizer.encode(text).ids
            room = self._seq_len - len(row)
            if len(ids) <= room or cuttable:
                row.extend(ids[:room])
                continue
            if len(ids) <= self._seq_len:
                self._pending = ids  # starts the next row whole
            while len(row) < self._seq_len:  # fill the rest with plain text (always cuttable)
                index = self._rng.choices(range(len(self._files)), weights=self._weights)[0]
                row.extend(self._tokenizer.encode(self._plain(index)).ids[: self._seq_len - len(row)])
        return row

    def _cut_rows(self, batch_size: int) -> list[list[int]]:
        """Examples concatenated and cut at row boundaries (the short-context phases' packing)."""
        need = batch_size * self._seq_len
        while len(self._buffer) < need:
            self._buffer.extend(self._tokenizer.encode(self.example_text()).ids)
        flat, self._buffer = self._buffer[:need], self._buffer[need:]
        return [flat[i : i + self._seq_len] for i in range(0, need, self._seq_len)]

    def batch(self, batch_size: int) -> torch.Tensor:
        """The next (B, T) int64 rows."""
        if self._mix.whole_examples:
            rows = [self._row() for _ in range(batch_size)]
        else:
            rows = self._cut_rows(batch_size)
        return torch.tensor(rows, dtype=torch.int64)  # (B, T)

    def __iter__(self) -> Iterator[str]:
        while True:
            yield self.example_text()


def plain_rows(
    files: list[SourceFile], tokenizer: Tokenizer, seq_len: int, max_rows: int
) -> list[torch.Tensor]:
    """Deterministic (1, T) rows of whole held-out files, for perplexity: each file is tokenized from
    its start with its path header and cut into full rows; files are taken in order until ``max_rows``."""
    rows: list[torch.Tensor] = []
    for file in files:
        ids = tokenizer.encode(plain_training_text(file.text, file.path, ends_file=True)).ids
        for start in range(0, len(ids) - seq_len + 1, seq_len):
            rows.append(
                torch.tensor(ids[start : start + seq_len], dtype=torch.int64).view(1, seq_len)
            )  # (1, T)
            if len(rows) >= max_rows:
                return rows
    return rows
