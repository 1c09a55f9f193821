"""Comments edited: a trailing comment deleted is deleted where it trails code that begins alike
(its first two tokens: ``raise NotImplementedError``, ``from pkg``; any code after two examples); a
comment added is added after the same code, token for token, from the second example only, where
that code ends its line; any other comment added makes no rule (found by replaying held-out
histories, ``bench/next_edit``: pluggy, uvicorn, tox, and the tenth set: nox, coverage)."""

from __future__ import annotations

import pytest

from lsp_server.next_edit.rule_agreement import agree
from tests.lsp_server.next_edit.test_edit_rules import _agreed_sites, _apply, _learned, _sites, _two_examples


def test_a_deleted_trailing_comment_is_deleted_where_it_trails_code_of_the_same_shape() -> None:
    before = (
        "x = f('a')  # type: ignore\nx = f('b')  # type: ignore\ny = g()  # type: ignore\n"
        "# type: ignore\nc = '# type: ignore'\n"
    )
    after = before.replace("x = f('a')  # type: ignore", "x = f('a')", 1)
    assert _sites("python", before, after) == [("  # type: ignore", "")]  # after x = f('b') only


def test_a_deleted_trailing_comment_is_deleted_after_statements_that_begin_alike() -> None:
    before = (
        "from pkg.a import Tree  # noqa\nfrom pkg import Node  # noqa\nfrom other import X  # noqa\n"
        "import pkg  # noqa\n"
        "def f():\n    raise NotImplementedError('a')  # pragma: no cover\n"
        "def g():\n    raise NotImplementedError('b')  # pragma: no cover\n"
        "def h():\n    raise AssertionError('c')  # pragma: no cover\n"
    )
    after = before.replace("Tree  # noqa", "Tree", 1)
    assert _sites("python", before, after) == [("  # noqa", "")]  # after from pkg import Node only
    after = before.replace("('a')  # pragma: no cover", "('a')", 1)
    assert _sites("python", before, after) == [("  # pragma: no cover", "")]  # after g's raise only


def test_a_deleted_trailing_comment_is_deleted_after_the_last_line_of_a_statement_that_begins_alike() -> None:
    before = (
        "def to_jwk(a: int) -> int: ...  # pragma: no cover\n"
        "def to_jwk(\n    a: str,\n) -> str: ...  # pragma: no cover\n"
        "x = h(\n    1,\n)  # pragma: no cover\n"
    )
    after = before.replace("int: ...  # pragma: no cover", "int: ...", 1)
    assert _sites("python", before, after) == [("  # pragma: no cover", "")]  # after the second to_jwk only


def test_a_deleted_trailing_comment_is_deleted_after_any_definition_of_the_same_kind() -> None:
    before = "def test_a(  # noqa: PLR0913\n    a,\n):\n    pass\n"
    before += "def test_b(  # noqa: PLR0913\n    b,\n):\n    pass\nx = f(  # noqa: PLR0913\n    c,\n)\n"
    after = before.replace("test_a(  # noqa: PLR0913", "test_a(", 1)
    assert _sites("python", before, after) == [("  # noqa: PLR0913", "")]  # after def test_b( only


def test_two_deleted_trailing_comments_after_different_code_delete_it_after_any_code() -> None:
    before = "x = f('a')  # type: ignore\ny = g()  # type: ignore\nz = [h()]  # type: ignore\n"
    once = before.replace("x = f('a')  # type: ignore", "x = f('a')", 1)
    twice = once.replace("y = g()  # type: ignore", "y = g()", 1)
    first, second = _two_examples("python", before, once, twice)
    assert _apply("python", first.rule, once, (first.start, first.end)) == []  # no line of x = f(…)'s shape
    both = agree(first.rule, second.rule)
    assert both is not None
    assert _apply("python", both, twice, (second.start, second.end)) == [("  # type: ignore", "")]


@pytest.mark.parametrize(
    ("before", "after", "learns"),
    [
        pytest.param(
            "if a:\n    x()\nif b:\n    y()\n",
            "if a:  # pragma: no branch\n    x()\nif b:\n    y()\n",
            False,
            id="a pragma after an if",
        ),
        pytest.param(
            "fetch(url)\nfetch(b)\n",
            "fetch(url)  # type: ignore[arg-type]\nfetch(b)\n",
            True,
            id="a type: ignore",
        ),
        pytest.param("a = 1\nb = 2\n", "# the first\na = 1\nb = 2\n", False, id="a comment line"),
    ],
)
def test_a_comment_added_is_added_nowhere_but_after_the_same_code(
    before: str, after: str, learns: bool
) -> None:
    learned = _learned("python", before, after)
    assert (learned is not None) == learns
    if learned is not None:
        assert _apply("python", learned.rule, after, (learned.start, learned.end)) == []


def test_a_comment_added_after_two_lines_is_added_after_the_same_code_where_the_line_ends() -> None:
    before = (
        "@pytest.fixture(autouse=True)\ndef a():\n    pass\n\n\n"
        "@pytest.fixture(autouse=True)\ndef b():\n    pass\n\n\n"
        "@pytest.fixture(autouse=True)  # keep\ndef c():\n    pass\n\n\n"
        "@pytest.fixture(autouse=True)\ndef d():\n    x = load(p)\n    x = load(p); y = 1\n"
    )
    once = before.replace("autouse=True)\ndef a", "autouse=True)  # noqa: RUF076\ndef a", 1)
    twice = once.replace("autouse=True)\ndef b", "autouse=True)  # noqa: RUF076\ndef b", 1)
    first, second = _two_examples("python", before, once, twice)
    # one example is a note for that place (found in the pluggy and uvicorn histories)
    assert _apply("python", first.rule, once, (first.start, first.end)) == []
    both = agree(first.rule, second.rule)
    assert both is not None
    assert _apply("python", both, twice, (second.start, second.end)) == [
        ("@pytest.fixture(autouse=True)", "@pytest.fixture(autouse=True)  # noqa: RUF076")
    ]  # found in the tox history: d's, not after c's own comment


def test_a_comment_added_is_added_only_where_the_same_code_ends_its_line() -> None:
    before = "x = load(p)\nx = load(p)\nx = load(p); y = 1\nx = load(p)  # other\nx = load(p)\n"
    once = before.replace("x = load(p)\n", "x = load(p)  # type: ignore[arg-type]\n", 1)
    twice = once.replace("x = load(p)\n", "x = load(p)  # type: ignore[arg-type]\n", 1)
    assert _agreed_sites("python", before, once, twice) == [
        ("x = load(p)", "x = load(p)  # type: ignore[arg-type]")
    ]  # the last line only


def test_two_deleted_trailing_comments_after_lines_differing_in_a_name_delete_it_after_any_code() -> None:
    before = 'pth = base / "a"  # ty: ignore\ndest = base / "b"  # ty: ignore\nprint(base)  # ty: ignore\n'
    once = before.replace('pth = base / "a"  # ty: ignore', 'pth = base / "a"', 1)
    twice = once.replace('dest = base / "b"  # ty: ignore', 'dest = base / "b"', 1)
    # the same note deleted after two lines that differ only in the name assigned: about the note
    assert _agreed_sites("python", before, once, twice) == [("  # ty: ignore", "")]


def test_a_line_deleted_with_its_comment_is_deleted_where_its_statement_stands() -> None:
    before = (
        "class A:\n    x = 1\n\n    g = f  # py3\n\n\nclass B:\n    x = 2\n\n    g = f  # py3\n\n\n"
        "class C:\n    x = 3\n    g = f\n    h = f  # py3\n"
    )
    after = before.replace("\n    g = f  # py3\n", "\n", 1)
    assert _sites("python", before, after) == [("    g = f  # py3\n", ""), ("    g = f\n", "")]
