"""Rules learned from one edit, and where they apply: each of issue 39's examples, in Python and
where the grammar allows in JavaScript/TypeScript, Go and Rust; edits that make no rule."""

from __future__ import annotations

import pytest

from lsp_server.completion.syntax import encode, language_spec, parse
from lsp_server.next_edit.edit_rule import EditRule, Learned
from lsp_server.next_edit.edit_rules import learn
from lsp_server.next_edit.rule_agreement import agree
from lsp_server.next_edit.rule_sites import find_sites


def _learned(language: str, before: str, after: str) -> Learned | None:
    spec = language_spec(language)
    assert spec is not None
    old, new = encode(before), encode(after)
    return learn(parse(spec, old), parse(spec, new), old, new)


def _two_examples(language: str, before: str, once: str, twice: str) -> tuple[Learned, Learned]:
    """The rules of the user's first edit (``before`` -> ``once``) and second (``once`` -> ``twice``)."""
    first, second = _learned(language, before, once), _learned(language, once, twice)
    assert first is not None and second is not None
    return first, second


def _agreed_sites(language: str, before: str, once: str, twice: str) -> list[tuple[str, str]]:
    """(old, new) at each place the rule two examples agree on applies in ``twice``, nearest first."""
    first, second = _two_examples(language, before, once, twice)
    both = agree(first.rule, second.rule)
    assert both is not None
    return _apply(language, both, twice, (second.start, second.end))


def _sites(language: str, before: str, after: str) -> list[tuple[str, str]]:
    """(old, new) at each place the edit's rule applies in ``after``, nearest first."""
    learned = _learned(language, before, after)
    assert learned is not None
    return _apply(language, learned.rule, after, (learned.start, learned.end))


def _apply(language: str, rule: EditRule, text: str, exclude: tuple[int, int]) -> list[tuple[str, str]]:
    spec = language_spec(language)
    assert spec is not None
    source = encode(text)
    sites = find_sites(rule, parse(spec, source), source, exclude[0], exclude)
    return [(site.old.decode(), site.new.decode()) for site in sites]


EXAMPLES = [
    pytest.param(
        "python",
        "timeout = 1\nfetch(url)\nfetch(other.url)\nfetch(a, b)\n",
        "timeout = 1\nfetch(url, timeout=timeout)\nfetch(other.url)\nfetch(a, b)\n",
        [("fetch(other.url)", "fetch(other.url, timeout=timeout)")],
        id="argument added, another first argument; two arguments is another shape",
    ),
    pytest.param(
        "python",
        "self.assertEquals(a, b)\nself.assertEquals(c, [d])\nassertEquals = 1\n",
        "self.assertEqual(a, b)\nself.assertEquals(c, [d])\nassertEquals = 1\n",
        [("self.assertEquals", "self.assertEqual")],
        id="call renamed, arguments kept",
    ),
    pytest.param(
        "python",
        "print x\nprint y + 1\n",
        "print(x)\nprint y + 1\n",
        [("print y + 1", "print(y + 1)")],
        id="print wrapped",
    ),
    pytest.param(
        "python",
        "if len(x) == 0:\n    pass\nif len(self.y) == 0:\n    pass\nif len(z) == 1:\n    pass\n",
        "if not x:\n    pass\nif len(self.y) == 0:\n    pass\nif len(z) == 1:\n    pass\n",
        [("len(self.y) == 0", "not self.y")],
        id="len(x) == 0 becomes not x",
    ),
    pytest.param(
        "python",
        "a = obj.size\nb = box.size\nc = box.size()\n",
        "a = obj.size()\nb = box.size\nc = box.size()\n",
        [("box.size", "box.size()")],
        id="attribute becomes a call, not where it is called already",
    ),
    pytest.param(
        "python",
        "d['colour'] = 1\ne = d['colour']\n# d['colour'] in a comment\nf = 'colour of'\n",
        "d['color'] = 1\ne = d['colour']\n# d['colour'] in a comment\nf = 'colour of'\n",
        [("'colour'", "'color'")],
        id="dictionary key, only where it is the whole string and not in a comment",
    ),
    pytest.param(
        "python",
        "def load_all():\n    pass\nload_all()\nawait load_all()\nx = client.load_all(1)\n",
        "async def load_all():\n    pass\nload_all()\nawait load_all()\nx = client.load_all(1)\n",
        [("load_all()", "await load_all()"), ("client.load_all(1)", "await client.load_all(1)")],
        id="await before the calls of a function made async",
    ),
    pytest.param(
        "python",
        "send(data=body)\nsend(data=other)\npost(data=body)\n",
        "send(content=body)\nsend(data=other)\npost(data=body)\n",
        [("data=other", "content=other")],
        id="keyword renamed at the calls of that function only",
    ),
    pytest.param(
        "python",
        "from .models import Request\nfrom .models import Response\nimport models\n",
        "from ._models import Request\nfrom .models import Response\nimport models\n",
        [(".models", "._models")],
        id="import line changed in its siblings",
    ),
    pytest.param(
        "python",
        "e: importlib_metadata.EntryPoint\nfor d in importlib_metadata.distributions():\n    o.EntryPoint\n",
        "e: importlib.metadata.EntryPoint\nfor d in importlib_metadata.distributions():\n    o.EntryPoint\n",
        [("importlib_metadata.distributions", "importlib.metadata.distributions")],
        id="a receiver replaced under one member, replaced under its others, however used",
    ),
    pytest.param(
        "javascript",
        "const a = util.format(x);\nutil.inspect.custom = 1;\nlog.format(y);\n",
        "const a = nodeUtil.format(x);\nutil.inspect.custom = 1;\nlog.format(y);\n",
        [("util.inspect", "nodeUtil.inspect")],
        id="a receiver replaced in JavaScript",
    ),
    pytest.param(
        "python",
        "if NEW:\n    from typing import Self\nelse:\n    from typing_extensions import Self\n"
        "from typing import Any\n",
        "if NEW:\n    from typing import Self\nelse:\n    from typing_extensions import NotRequired, Self\n"
        "from typing import Any\n",
        [("from typing import Self", "from typing import NotRequired, Self")],
        id="a name added to an import, added where the same names come from another module",
    ),
    pytest.param(
        "javascript",
        "const t = 1;\nfetch(url);\nfetch(other);\n// fetch(third);\nconst s = 'fetch(4)';\n",
        "const t = 1;\nfetch(url, {timeout: t});\nfetch(other);\n// fetch(third);\nconst s = 'fetch(4)';\n",
        [("fetch(other)", "fetch(other, {timeout: t})")],
        id="javascript: argument added, not in comments or strings",
    ),
    pytest.param(
        "typescript",
        "const a = obj.size;\nconst b = box.size;\n",
        "const a = obj.size();\nconst b = box.size;\n",
        [("box.size", "box.size()")],
        id="typescript: attribute becomes a call",
    ),
    pytest.param(
        "javascript",
        "function loadAll() {}\nloadAll(1);\nawait loadAll(2);\n",
        "async function loadAll() {}\nloadAll(1);\nawait loadAll(2);\n",
        [("loadAll(1)", "await loadAll(1)")],
        id="javascript: await",
    ),
    pytest.param(
        "go",
        'package m\n\nfunc f() {\n\ta := m["colour"]\n\tfetch(url)\n\tb := m["colour"]\n}\n',
        'package m\n\nfunc f() {\n\ta := m["color"]\n\tfetch(url)\n\tb := m["colour"]\n}\n',
        [('"colour"', '"color"')],
        id="go: string key",
    ),
    pytest.param(
        "go",
        "package m\n\nfunc f() {\n\tfetch(url)\n\tfetch(u2)\n}\n",
        "package m\n\nfunc f() {\n\tfetch(url, ctx)\n\tfetch(u2)\n}\n",
        [("fetch(u2)", "fetch(u2, ctx)")],
        id="go: argument added",
    ),
    pytest.param(
        "rust",
        "fn f() {\n    let a = x.len;\n    let b = y.len;\n}\n",
        "fn f() {\n    let a = x.len();\n    let b = y.len;\n}\n",
        [("y.len", "y.len()")],
        id="rust: field becomes a call",
    ),
    pytest.param(
        "rust",
        "fn load_all() {}\nfn g() {\n    load_all();\n}\n",
        "async fn load_all() {}\nfn g() {\n    load_all();\n}\n",
        [("load_all()", "load_all().await")],
        id="rust: .await after the calls of a function made async",
    ),
]


@pytest.mark.parametrize(("language", "before", "after", "expected"), EXAMPLES)
def test_the_rule_of_one_edit_applies_at_the_other_places_of_its_shape(
    language: str, before: str, after: str, expected: list[tuple[str, str]]
) -> None:
    assert _sites(language, before, after) == expected


def test_sites_come_nearest_the_example_first() -> None:
    before = "fetch(a)\nw = 0\nw = 0\nx = 1\nfetch(b)\nfetch(c)\ny = 2\nz = 3\nfetch(d)\n"
    after = before.replace("fetch(c)", "fetch(c, 1)")
    assert [old for old, _ in _sites("python", before, after)] == ["fetch(b)", "fetch(d)", "fetch(a)"]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param("fetch(url)\ntimeout = 1\n", "fetch(url, timeo)\ntimeout = 1\n", id="a half-typed name"),
        pytest.param("fetch(url)\nfetch(b)\n", "fetch(url, \nfetch(b)\n", id="the edit leaves an error"),
        pytest.param("a = 1\n", "a = 1\n", id="no change"),
        pytest.param("x = 1\n", "x = 1\n" + "y = 2\n" * 400, id="an edit too long to be an example"),
    ],
)
def test_no_rule_from_an_unfinished_or_giant_edit(before: str, after: str) -> None:
    assert _learned("python", before, after) is None


def test_a_short_name_called_is_typed_whole_though_longer_names_start_with_it() -> None:
    before = 'def when(d):\n    if _d(d):\n        return "a moment"\n    return "a second"\n'
    after = before.replace('"a moment"', '_("a moment")')
    learned = _learned("python", before, after)  # ``_`` (gettext) is written nowhere else yet
    assert learned is not None and learned.rule.after == (b"return _(", 0, 1, 0, b")")


def test_a_change_of_one_common_token_stays_quiet_until_a_second_example_agrees() -> None:
    before = "a = 0\nb = 0\nc = 0\n"
    first = _learned("python", before, "a = 1\nb = 0\nc = 0\n")
    second = _learned("python", "a = 1\nb = 0\nc = 0\n", "a = 1\nb = 1\nc = 0\n")
    assert first is not None and second is not None
    assert _apply("python", first.rule, "a = 1\nb = 0\nc = 0\n", (first.start, first.end)) == []
    both = agree(first.rule, second.rule)
    assert both is not None and both.examples == 2
    assert _apply("python", both, "a = 1\nb = 1\nc = 0\n", (second.start, second.end)) == [("c = 0", "c = 1")]


def test_two_examples_anti_unify_to_the_rule_both_agree_on() -> None:
    first = _learned("python", "x = a.size\n", "x = a.size()\n")
    second = _learned("python", "y = b.size\n", "y = b.size()\n")
    other = _learned("python", "z = c.count\n", "z = c.count()\n")
    assert first is not None and second is not None and other is not None
    both = agree(first.rule, second.rule)
    assert both is not None and both.before == first.rule.before and both.examples == 2
    general = agree(first.rule, other.rule)
    assert general is None  # the name is written in the replacement: no hole can carry it


def test_a_name_two_examples_differ_in_becomes_a_hole_in_the_replacement_too() -> None:
    source = (
        "def test_a():\n    pass\n\n\ndef test_b():\n    return 1\n\n\n"
        "def test_c():\n    x = 2\n\n\ndef helper(y):\n    pass\n"
    )
    once = source.replace("test_a():", "test_a() -> Any:")
    twice = once.replace("test_b():", "test_b() -> Any:")
    first, second = _two_examples("python", source, once, twice)
    assert _apply("python", first.rule, once, (first.start, first.end)) == []  # one example: its own name
    both = agree(first.rule, second.rule)
    assert both is not None
    assert _apply("python", both, twice, (second.start, second.end)) == [
        ("def test_c():\n    x = 2", "def test_c() -> Any:\n    x = 2"),
        ("def helper(y):\n    pass", "def helper(y) -> Any:\n    pass"),  # the parameters were kept: a hole
    ]


def test_a_deleted_decorator_line_is_deleted_at_its_other_places() -> None:
    before = "@skip_old\ndef a():\n    pass\n\n\nclass B:\n    @skip_old\n    def c(self):\n        pass\n"
    after = before.replace("@skip_old\n", "", 1)
    assert _sites("python", before, after) == [("    @skip_old\n", "")]


def test_two_examples_indented_differently_agree_on_one_rule() -> None:
    source = (
        "def test_a():\n    pass\n\n\nclass TestB:\n    def test_b(self):\n        return 1\n\n"
        "    def test_c(self):\n        x = 2\n\n\ndef test_d():\n    y = 3\n"
    )
    once = source.replace("test_a():", "test_a() -> None:")
    twice = once.replace("test_b(self):", "test_b(self) -> None:")
    first, second = _two_examples("python", source, once, twice)
    both = agree(first.rule, second.rule)
    assert both is not None and both.examples == 2
    assert _apply("python", both, twice, (second.start, second.end)) == [
        ("def test_c(self):\n        x = 2", "def test_c(self) -> None:\n        x = 2"),
        ("def test_d():\n    y = 3", "def test_d() -> None:\n    y = 3"),
    ]


def test_a_long_function_s_signature_changed_is_changed_where_the_same_method_is_defined() -> None:
    body = "".join(f"        total_{n} = compute(item, {n})\n" for n in range(60)) + "        return item\n"
    assert len(body) > 1_500  # longer than a rule's node may be: the body is one hole
    method = "    def handle(self, item: Optional[str]) -> Optional[str]:\n" + body
    before = f"class A:\n{method}\n\nclass B:\n{method}"
    after = before.replace("item: Optional[str]) -> Optional[str]", "item: str) -> str", 1)
    (old, new), *rest = _sites("python", before, after)
    assert rest == [] and old == method.strip() and new == method.strip().replace("Optional[str]", "str")
