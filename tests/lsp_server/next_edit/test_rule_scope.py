"""Rules that stay quiet where the example's context is missing (the seventh round of replaying
held-out histories, ``bench/next_edit``): a statement written beside a node kept whole, whose shape
does not tell where it goes, even after two examples; a replacement that reads a name nothing binds
at the site."""

from __future__ import annotations

import pytest

from lsp_server.completion.syntax import encode, language_spec, parse
from lsp_server.next_edit.name_bindings import bound_at, reads_of
from lsp_server.next_edit.rule_agreement import agree
from tests.lsp_server.next_edit.test_edit_rules import _apply, _sites, _two_examples


def test_a_statement_written_before_two_kept_returns_is_no_rule_of_every_return() -> None:
    before = (
        "class Reader:\n"
        "    def size(self):\n        return self._buffer.size\n\n"
        "    def name(self):\n        return self._name\n\n"
        "    def mode(self):\n        return 'rb'\n"
    )
    check = "        self._ensure_open()\n"
    once = before.replace("        return self._buffer", check + "        return self._buffer", 1)
    twice = once.replace("        return self._name", check + "        return self._name", 1)
    first, second = _two_examples("python", before, once, twice)
    both = agree(first.rule, second.rule)
    assert both is not None and both.examples == 2 and both.beside
    assert _apply("python", both, twice, (second.start, second.end)) == []


def test_a_decorator_written_on_two_kept_definitions_still_repeats() -> None:
    before = (
        "class A:\n    def f(self):\n        pass\n\n    def g(self):\n        pass\n\n"
        "    def h(self):\n        pass\n"
    )
    once = before.replace("    def f(", "    @abstract\n    def f(", 1)
    twice = once.replace("    def g(", "    @abstract\n    def g(", 1)
    first, second = _two_examples("python", before, once, twice)
    both = agree(first.rule, second.rule)
    assert both is not None and not both.beside
    assert _apply("python", both, twice, (second.start, second.end)) == [
        ("def h(self):\n        pass", "@abstract\n    def h(self):\n        pass")
    ]


def test_a_name_read_by_the_replacement_must_be_bound_at_the_site() -> None:
    before = (
        "def build(job):\n    flags = job.flags or []\n    run(job.flags)\n\n\n"
        "def lint(job):\n    run(job.flags)\n\n\n"
        "def test(job, flags):\n    run(job.flags)\n\n\n"
        "def check(job):\n    for flags in job.all:\n        run(job.flags)\n"
    )
    after = before.replace("run(job.flags)", "run(flags)", 1)
    assert _sites("python", before, after) == [("job.flags", "flags"), ("job.flags", "flags")]


def test_a_name_bound_nowhere_at_the_example_is_written_in_the_example_s_function_only() -> None:
    before = "def a(p):\n    show(p.total)\n    show(p.total, 2)\n\n\ndef b(p):\n    show(p.total, 2)\n"
    after = before.replace("show(p.total)", "show(total)", 1)  # ``total = p.total`` typed next
    assert _sites("python", before, after) == [("p.total", "total")]


def test_a_name_still_to_be_imported_for_a_signature_is_written_wherever_the_type_is() -> None:
    before = (
        "class A:\n    def f(self) -> mod.Size:\n        pass\n\n"
        "    def g(self) -> mod.Size:\n        pass\n\n    size: mod.Size = get()\n"
    )
    after = before.replace("def f(self) -> mod.Size", "def f(self) -> Size", 1)  # imported next
    assert _sites("python", before, after) == [("mod.Size", "Size"), ("mod.Size", "Size")]


def test_a_function_or_module_still_to_be_imported_is_written_in_every_function() -> None:
    before = "def a():\n    x = Pool(1)\n\n\ndef b():\n    y = Pool(2)\n"
    after = before.replace("x = Pool(1)", "x = net.Pool(1)", 1)  # ``import net`` typed next
    assert _sites("python", before, after) == [("Pool", "net.Pool")]  # the name, wherever read


def test_a_name_the_replacement_binds_itself_is_no_name_it_reads() -> None:
    spec = language_spec("python")
    assert spec is not None
    source = b"def a(path):\n    return wrap(path)\n"  # ``tmpdir`` renamed ``path`` with its reads
    assert reads_of(parse(spec, source).root_node, {}) == {b"wrap"}


def test_a_constant_still_to_be_defined_is_written_in_every_function() -> None:
    before = "def a(p):\n    p.wait(timeout=0.25)\n\n\ndef b(p):\n    p.wait(timeout=0.25)\n"
    after = before.replace("timeout=0.25", "timeout=MAX_WAIT", 1)
    assert _sites("python", before, after) == [("timeout=0.25", "timeout=MAX_WAIT")]


BINDINGS = (
    "import os.path as osp, json\n"
    "from re import sub, compile as rx\n"
    "LIMIT = 3\n"
    "class K:\n"
    "    size = 1\n"
    "    def m(self, a, *rest, key=None):\n"
    "        with open(a) as fh, g() as (p, q):\n"
    "            pass\n"
    "        try:\n"
    "            pass\n"
    "        except OSError as err:\n"
    "            pass\n"
    "        for i, (j, k) in a:\n"
    "            total = (n := 2)\n"
    "        def inner():\n"
    "            SITE\n"
    "        return [z for z in a]\n"
    "    SITE\n"
    "def f():\n"
    "    SITE\n"
)


@pytest.mark.parametrize(
    ("name", "seen"),
    [
        ("osp", (True, True, True)),
        ("json", (True, True, True)),
        ("os", (False, False, False)),
        ("sub", (True, True, True)),
        ("rx", (True, True, True)),
        ("compile", (True, True, True)),  # a builtin
        ("LIMIT", (True, True, True)),
        ("K", (True, True, True)),
        ("f", (True, True, True)),
        ("size", (False, True, False)),  # a class's name: its body sees it, its methods do not
        ("a", (True, False, False)),
        ("rest", (True, False, False)),
        ("key", (True, False, False)),
        ("fh", (True, False, False)),
        ("q", (True, False, False)),
        ("err", (True, False, False)),
        ("k", (True, False, False)),
        ("total", (True, False, False)),
        ("n", (True, False, False)),
        ("inner", (True, False, False)),
        ("z", (True, False, False)),
        ("missing", (False, False, False)),
    ],
)
def test_a_name_is_bound_where_its_scope_is_seen(name: str, seen: tuple[bool, bool, bool]) -> None:
    spec = language_spec("python")
    assert spec is not None
    source = encode(BINDINGS)
    tree = parse(spec, source)
    sites = [at for at in range(len(source)) if source.startswith(b"SITE", at)]  # in inner, K, f
    nodes = [tree.root_node.descendant_for_byte_range(at, at + 4) for at in sites]
    cache: dict[bytes, frozenset[int]] = {}
    assert tuple(bound_at(node, name.encode(), tree, source, cache) for node in nodes if node) == seen


def test_the_names_read_leave_out_members_keywords_holes_and_bindings() -> None:
    spec = language_spec("python")
    assert spec is not None
    source = b"x = fetch(url, timeout=limit).body + other.size + kept(a)\n"
    node = parse(spec, source).root_node
    assert reads_of(node, {b"kept(a)": 0}) == {b"fetch", b"url", b"limit", b"other"}
