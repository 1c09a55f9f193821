"""Rules told by what they are about (found reading the eleventh held-out set, ``bench/next_edit``):
a comparison now expecting another literal is about its subject, not about a literal as common as
``2``; a member inserted after a receiver (``sock.send`` -> ``sock.remote.send``) belongs to that
receiver's object; a literal given as a value is data, and the same literal as a dictionary's key or
a subscript's index names an entry instead."""

from __future__ import annotations

from lsp_server.next_edit.edit_pattern import Branch, Hole
from lsp_server.next_edit.rule_agreement import agree
from tests.lsp_server.next_edit.test_edit_rules import _agreed_sites, _learned, _sites, _two_examples

COUNTS = (
    "def test_one():\n    assert url.call_count == 2\n\n\n"
    "def test_two():\n    assert url.call_count == 2\n    assert fetch.call_count == 2\n\n\n"
    "def test_three():\n    assert url.call_count == 2\n    assert fetch.call_count == 2\n"
)


def test_a_comparison_expecting_another_value_is_not_repeated_after_one_example() -> None:
    after = COUNTS.replace("url.call_count == 2", "url.call_count == 1", 1)
    assert _sites("python", COUNTS, after) == []


def test_two_examples_expecting_another_value_of_one_subject_change_that_subject_only() -> None:
    once = COUNTS.replace("url.call_count == 2", "url.call_count == 1", 1)
    twice = once.replace("url.call_count == 2", "url.call_count == 1", 1)
    # test_three's url, not the fetch counts beside it, as the rule of ``□ == 2`` would
    assert _agreed_sites("python", COUNTS, once, twice) == [("url.call_count == 2", "url.call_count == 1")]


def test_two_subjects_given_another_value_make_the_subject_a_hole_where_they_differ() -> None:
    once = COUNTS.replace("url.call_count == 2", "url.call_count == 1", 1)
    twice = once.replace("fetch.call_count == 2", "fetch.call_count == 1", 1)
    first, second = _two_examples("python", COUNTS, once, twice)
    assert first.rule.changes_value and second.rule.changes_value
    assert agree(first.rule, second.rule) is not None
    assert _agreed_sites("python", COUNTS, once, twice) == [
        ("url.call_count == 2", "url.call_count == 1"),
        ("url.call_count == 2", "url.call_count == 1"),
        ("fetch.call_count == 2", "fetch.call_count == 1"),
    ]


def test_a_comparison_given_another_operator_keeps_its_subject_a_hole() -> None:
    before = "if a.b == None:\n    pass\nif c.d == None:\n    pass\n"
    learned = _learned("python", before, before.replace("a.b == None", "a.b is None", 1))
    assert learned is not None and not learned.rule.changes_value
    statement = learned.rule.before  # ``if □ == □: □``, widened to the statement its keyword tells
    assert isinstance(statement, Branch) and statement.type == "if_statement"
    comparison = statement.children[1]
    assert isinstance(comparison, Branch) and comparison.type == "comparison_operator"
    assert isinstance(comparison.children[0], Hole)


MEMBERS = (
    "def test_a(sock, inst):\n    sock.send = send\n    sock.send = other\n    inst.send = send\n"
    "    sock.recv = recv\n"
)


def test_a_member_inserted_after_a_receiver_is_that_receivers_only() -> None:
    after = MEMBERS.replace("sock.send", "sock.remote.send", 1)
    assert _sites("python", MEMBERS, after) == [("sock.send", "sock.remote.send")]  # not inst.send


def test_a_call_added_to_a_member_still_holds_any_receiver() -> None:
    before = "a = box.size\nb = other.size\n"
    after = before.replace("box.size", "box.size()", 1)
    assert _sites("python", before, after) == [("other.size", "other.size()")]


WHEELS = (
    'BUNDLE = {\n    "3.12": {"setuptools": "setuptools-82.whl"},\n'
    '    "3.11": {"setuptools": "setuptools-82.whl"},\n'
    '    "3.10": {"setuptools": "setuptools-82.whl"},\n}\n'
    'HASHES = {\n    "setuptools-82.whl": "abc",\n}\n'
    'x = HASHES["setuptools-82.whl"]\n'
)


def test_a_value_changed_twice_is_not_changed_where_the_literal_is_a_key_or_an_index() -> None:
    once = WHEELS.replace('"setuptools-82.whl"', '"setuptools-83.whl"', 1)
    twice = once.replace('"setuptools-82.whl"', '"setuptools-83.whl"', 1)
    assert _agreed_sites("python", WHEELS, once, twice) == [('"setuptools-82.whl"', '"setuptools-83.whl"')]


QUALIFIED = (
    "from ._config import DEFAULT\nfrom . import _config\n\n\n"
    "def f(x=DEFAULT):\n    y = DEFAULT\n    z = obj.DEFAULT\n    g(DEFAULT=1)\n    return [DEFAULT]\n\n\n"
    "def h():\n    DEFAULT = 2\n"
)


def test_a_name_qualified_is_qualified_where_it_is_read_only() -> None:
    after = QUALIFIED.replace("def f(x=DEFAULT)", "def f(x=_config.DEFAULT)", 1)
    # not where it is imported, a member, a keyword or assigned
    assert _sites("python", QUALIFIED, after) == [("DEFAULT", "_config.DEFAULT")] * 2


def test_two_names_qualified_with_the_module_they_come_from_qualify_the_names_imported_with_them() -> None:
    before = (
        "from httpcore import Backend, Pool, Stream\nfrom other import Thing\nimport httpcore\n\n\n"
        "def f():\n    b = Backend()\n    p = Pool(b)\n    s = Stream(p)\n    return Thing(s)\n"
    )
    once = before.replace("b = Backend()", "b = httpcore.Backend()", 1)
    assert _sites("python", before, once) == []  # one name: its import may stay (dateutil's history)
    twice = once.replace("p = Pool(b)", "p = httpcore.Pool(b)", 1)
    assert _agreed_sites("python", before, once, twice) == [("Stream", "httpcore.Stream")]  # not Thing
    first, second = _two_examples("python", before, once, once.replace("p = Pool(b)", "p = net.Pool(b)", 1))
    assert agree(first.rule, second.rule) is None  # another module: no move of the import
