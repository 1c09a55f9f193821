"""What a site already uses (found replaying the sixth untouched set, ``bench/next_edit``): a decorator
written on two definitions goes on the definitions that use what both examples' bodies use from
outside them (a mark that skips the tests needing one tool is not put on every test of the file); a
keyword argument a call passes already is not passed again."""

from __future__ import annotations

from lsp_server.next_edit.rule_agreement import agree
from tests.lsp_server.next_edit.test_edit_rules import _apply, _learned, _two_examples

TESTS = (
    "import shell\nfrom app import main\n\n\n"
    "def test_copy(tmp):\n    shell.copy(tmp)\n\n\n"
    "def test_move(tmp):\n    shell.move(tmp, main)\n\n\n"
    "def test_help(runner):\n    assert main(runner, '--help')\n\n\n"
    "def test_remove(path):\n    assert shell.remove(path)\n"
)
MARK = "@skip_on(OS)\n"


def test_a_decorator_after_two_examples_goes_on_the_definitions_using_what_both_used() -> None:
    once = TESTS.replace("def test_copy", MARK + "def test_copy")
    twice = once.replace("def test_move", MARK + "def test_move")
    first, second = _two_examples("python", TESTS, once, twice)
    assert first.rule.uses == (b"shell",) and second.rule.uses == (b"main", b"shell")
    both = agree(first.rule, second.rule)
    assert both is not None and both.uses == (b"shell",)
    sites = _apply("python", both, twice, (second.start, second.end))
    assert [new.splitlines()[:2] for _, new in sites] == [["@skip_on(OS)", "def test_remove(path):"]]


def test_definitions_sharing_nothing_from_outside_leave_the_decorator_unchecked() -> None:
    plain = (
        "def test_a():\n    assert one()\n\n\ndef test_b():\n    assert two()\n\n\ndef test_c():\n    pass\n"
    )
    once = plain.replace("def test_a", MARK + "def test_a")
    twice = once.replace("def test_b", MARK + "def test_b")
    first, second = _two_examples("python", plain, once, twice)
    both = agree(first.rule, second.rule)
    assert both is not None and both.uses == ()
    assert [old.splitlines()[0] for old, _ in _apply("python", both, twice, (second.start, second.end))] == [
        "def test_c():"
    ]


def test_a_builtin_or_a_parameter_is_nothing_used_from_outside() -> None:
    before = "def test_a(data):\n    print(len(data))\n"
    learned = _learned("python", before, MARK + before)
    assert learned is not None and learned.rule.uses == ()


POOL = (
    "class Pool:\n"
    "    async def read(self, size):\n        return await run(self.fp.read, size)\n\n"
    "    async def close(self):\n        return await run(self.fp.close, limit=self.limit)\n\n"
    "    async def seek(self, at):\n        return await run(self.fp.seek, at)\n"
)


def test_a_keyword_argument_is_not_passed_where_the_call_passes_it_already() -> None:
    after = POOL.replace("run(self.fp.read, size)", "run(self.fp.read, size, limit=self.limit)")
    learned = _learned("python", POOL, after)
    assert learned is not None
    # close's call has the same shape (two arguments) but passes ``limit`` already
    assert _apply("python", learned.rule, after, (learned.start, learned.end)) == [
        ("run(self.fp.seek, at)", "run(self.fp.seek, at, limit=self.limit)")
    ]
