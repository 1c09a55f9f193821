"""An edit making the same change on several lines at once teaches as two examples: the rule is the
one its first two lines agree on, offered at the other lines of that shape (read in the held-out
histories: arrow, dateutil, tox)."""

from __future__ import annotations

from lsp_server.completion.syntax import encode, language_spec, parse
from lsp_server.next_edit.diffs import FileEdit
from lsp_server.next_edit.edit_lines import learn_by_line, line_changes
from lsp_server.next_edit.repeated_edits import RepeatedEdits
from tests.lsp_server.next_edit.test_edit_rules import _apply

BEFORE = (
    "class T(TestCase):\n"
    "    def test_a(self):\n"
    '        self.assertEqual(fmt(dt, "YYYY"), "2013")\n'
    '        self.assertEqual(fmt(dt, "YY"), "13")\n\n'
    "    def test_b(self):\n"
    '        self.assertEqual(fmt(dt, "HH"), "02")\n'
    "        self.assertTrue(fmt(dt, 'H'))\n"
)
AFTER = BEFORE.replace(
    '        self.assertEqual(fmt(dt, "YYYY"), "2013")\n        self.assertEqual(fmt(dt, "YY"), "13")\n',
    '        assert fmt(dt, "YYYY") == "2013"\n        assert fmt(dt, "YY") == "13"\n',
)


def _learned_by_line(before: str, after: str) -> tuple[list[tuple[str, str]], int] | None:
    spec = language_spec("python")
    assert spec is not None
    old = encode(before)
    learned = learn_by_line(spec, parse(spec, old), old, encode(after))
    if learned is None:
        return None
    return _apply("python", learned.rule, after, (learned.start, learned.end)), learned.rule.examples


def test_two_lines_changed_alike_teach_as_two_examples_and_reach_the_other_lines() -> None:
    assert _learned_by_line(BEFORE, AFTER) == (
        [('self.assertEqual(fmt(dt, "HH"), "02")', 'assert fmt(dt, "HH") == "02"')],
        2,
    )


def test_lines_changed_differently_teach_nothing_line_by_line() -> None:
    after = BEFORE.replace('"YYYY"), "2013")', '"YYYY"), "2014")').replace(
        'assertEqual(fmt(dt, "YY")', 'assertEqual(fmt(dt, "Y")'
    )
    assert line_changes(encode(BEFORE), encode(after)) != []  # two lines, each changed
    assert _learned_by_line(BEFORE, after) is None


def test_one_statement_over_two_lines_is_learned_whole() -> None:
    before = "x = call(\n    a,\n    b)\ny = call(\n    a,\n    b)\n"
    after = before.replace("x = call(\n    a,\n    b)", "x = call(\n    c,\n    d)", 1)
    assert len(line_changes(encode(before), encode(after))) == 2
    assert _learned_by_line(before, after) is None  # each line alone is one of two changes to the call


def test_lines_inserted_or_a_run_replaced_by_another_length_are_no_line_changes() -> None:
    before = "a = 1\nb = 2\n"
    assert line_changes(encode(before), encode("a = 1\nc = 3\nb = 2\n")) == []
    assert line_changes(encode(before), encode("a = 1; b = 2\n")) == []
    assert (
        line_changes(encode(before), encode("a = 10\nb = 2\n")) == []
    )  # one change: the edit is one example
    assert line_changes(encode(before), encode("a = 10\nb = 20\n")) == [(0, 5, b"a = 10"), (6, 11, b"b = 20")]


def test_one_line_changed_alike_at_two_places_teaches_as_two_examples() -> None:
    before = (
        "def f(g: Callable[[Any, Printer], str]) -> Callable[[Any, Printer], str]:\n    pass\n\n\n"
        "def h(k: Callable[[Any, Printer], str]) -> None:\n    pass\n"
    )
    after = before.replace(
        ") -> Callable[[Any, Printer], str]:", ") -> Callable[[Any, Config, int], str]:", 1
    )
    after = after.replace("f(g: Callable[[Any, Printer], str])", "f(g: Callable[[Any, Config, int], str])", 1)
    assert [(new) for _, _, new in line_changes(encode(before), encode(after))] == [
        b"Config, int",
        b"Config, int",
    ]
    # found in the isort history: a type of the project's own replaced, wherever it annotates
    assert _learned_by_line(before, after) == ([("[Any, Printer]", "[Any, Config, int]")], 2)


def test_the_service_offers_the_rule_of_two_lines_changed_at_once() -> None:
    spec = language_spec("python")
    assert spec is not None
    offered = RepeatedEdits().propose(spec, FileEdit(path="t.py", before=BEFORE, after=AFTER, at=0.0))
    assert [(old, new) for _, _, _, old, new in offered] == [
        ('self.assertEqual(fmt(dt, "HH"), "02")', 'assert fmt(dt, "HH") == "02"')
    ]


def test_a_minified_line_is_no_example_of_its_changes() -> None:
    line = "x=f(a);" * 2_000
    assert line_changes(encode(line + "\n"), encode(line.replace("f(a)", "g(a)") + "\n")) == []
