"""Rules about values (found replaying the eighth round's held-out histories, ``bench/next_edit``): a
value wrapped in a call where it is used one way is not wrapped where it is used another; a literal
given as a value and replaced by another literal is data for that place, unless both are version
numbers (the project's version, wherever written); a hole written into an f-string never takes text
holding the string's quote. A definition decorated is no value: it is decorated again wherever its
kind stands."""

from __future__ import annotations

from lsp_server.next_edit.rule_agreement import agree
from tests.lsp_server.next_edit.test_edit_rules import _apply, _learned, _sites, _two_examples

WRAPPED = (
    "def first(box):\n    return box.limit\n\n\n"
    "def second(box):\n    if box.limit is None:\n        return 0\n    return box.limit\n\n\n"
    "def third(box):\n    size = box.limit\n    log(box.limit)\n    return size\n"
)


def test_a_value_wrapped_where_it_is_returned_is_wrapped_where_another_is_returned_only() -> None:
    after = WRAPPED.replace("return box.limit", "return clamp(box.limit)", 1)
    assert _sites("python", WRAPPED, after) == [("box.limit", "clamp(box.limit)")]  # second's return


def test_two_examples_wrapped_in_two_kinds_of_use_wrap_in_both_and_no_other() -> None:
    once = WRAPPED.replace("return box.limit", "return clamp(box.limit)", 1)
    twice = once.replace("size = box.limit", "size = clamp(box.limit)", 1)
    first, second = _two_examples("python", WRAPPED, once, twice)
    both = agree(first.rule, second.rule)
    assert both is not None and both.wrapped_in == ("assignment", "return_statement")
    # second's return only: not its comparison, nor third's argument of log()
    assert _apply("python", both, twice, (second.start, second.end)) == [("box.limit", "clamp(box.limit)")]


def test_a_literal_value_replaced_by_another_is_not_repeated_after_one_example() -> None:
    before = (
        'RECORDS = [\n    {"kind": "text/plain", "size": 1},\n    {"kind": "text/plain", "size": 2},\n]\n'
        'serve(kind="text/plain")\n'
    )
    after = before.replace('"text/plain"', '"image/png"', 1)
    assert _sites("python", before, after) == []


def test_a_literal_replaced_by_a_constant_or_a_key_renamed_still_repeats() -> None:
    before = 'serve(kind="text/plain")\nserve(kind="text/plain")\nx = d["colour"]\ny = d["colour"]\n'
    constant = before.replace('"text/plain"', "PLAIN", 1)
    assert _sites("python", before, constant) == [('"text/plain"', "PLAIN")]
    key = before.replace('d["colour"]', 'd["color"]', 1)
    assert _sites("python", before, key) == [('"colour"', '"color"')]


def test_a_hole_written_into_an_f_string_never_takes_text_with_its_quote() -> None:
    before = "a = str(n.day)\nb = str(n.hour)\nc = str(\"{:02d}\".format(n.minute))\nd = str('x')\n"
    after = before.replace("str(n.day)", 'f"{n.day}"', 1)
    assert _sites("python", before, after) == [
        ("str(n.hour)", 'f"{n.hour}"'),
        ("str('x')", "f\"{'x'}\""),
    ]


def test_a_decorator_written_around_a_class_is_written_around_a_decorated_one_too() -> None:
    before = "class A:\n    x = 1\n\n\n@frozen\nclass B:\n    x = 2\n\n\nclass C:\n    x = 3\n"
    after = before.replace("class A:", "@tagged\nclass A:", 1)
    once = _learned("python", before, after)
    assert once is not None and once.rule.wrapped_in == ()  # a statement's parent tells nothing
    twice = after.replace("class C:", "@tagged\nclass C:", 1)
    second = _learned("python", after, twice)
    assert second is not None
    both = agree(once.rule, second.rule)
    assert both is not None
    assert _apply("python", both, twice, (second.start, second.end)) == [
        ("class B:\n    x = 2", "@tagged\nclass B:\n    x = 2")
    ]


def test_only_the_holes_inside_the_f_strings_braces_are_kept_from_its_quote() -> None:
    before = "a = '{!r}'.format(name)\nb = '{!r}'.format(other)\nc = '{!r}'.format(d['k'])\n"
    after = before.replace("'{!r}'.format(name)", "f'{name!r}'", 1)
    assert _sites("python", before, after) == [("'{!r}'.format(other)", "f'{other!r}'")]


CONVERTED = (
    'def first(path):\n    label = f"{name} ({path})"\n    return label\n\n\n'
    'def second(path):\n    label = f"{name} ({path})"\n    log(f"{path}::end")\n    return label\n'
)


def test_an_insertion_tied_only_to_a_variable_waits_for_a_second_example() -> None:
    after = CONVERTED.replace("({path})", "({path.as_posix()})", 1)
    assert _sites("python", CONVERTED, after) == []  # a conversion chosen for one use of the value


def test_two_examples_of_an_insertion_tied_to_a_variable_repeat_it() -> None:
    once = CONVERTED.replace("({path})", "({path.as_posix()})", 1)
    twice = once.replace("({path})", "({path.as_posix()})", 1)
    first, second = _two_examples("python", CONVERTED, once, twice)
    both = agree(first.rule, second.rule)
    assert both is not None
    assert _apply("python", both, twice, (second.start, second.end)) == [("{path}", "{path.as_posix()}")]


def test_an_insertion_after_a_member_repeats_after_one_example() -> None:
    before = "a = box.size\nb = other.size\nc = size\n"
    assert _sites("python", before, "a = box.size()\nb = other.size\nc = size\n") == [
        ("other.size", "other.size()")
    ]  # the member's name ties the sites, not a variable


def test_a_name_written_longer_is_a_replacement_not_an_insertion() -> None:
    before = 'a = f"{size}:"\nb = f"{size}:"\n'
    after = 'a = f"{cached_size}:"\nb = f"{size}:"\n'
    assert _sites("python", before, after) == [("{size}", "{cached_size}")]  # one example is enough


def test_a_type_given_a_parameter_is_an_anchor_not_a_variable() -> None:
    before = "def a(cl: type, n: int):\n    pass\n\n\ndef b(cl: type):\n    pass\n"
    after = before.replace("cl: type,", "cl: type[T],", 1)
    assert _sites("python", before, after) == [("cl: type", "cl: type[T]")]


def test_a_version_number_bumped_is_bumped_where_the_same_version_is_written() -> None:
    before = 'version = "7.11.2"\nrelease = "7.11.2"\nother = "7.11.1"\nminimum = "3.8"\n'
    after = before.replace("7.11.2", "7.11.3", 1)
    assert _sites("python", before, after) == [('"7.11.2"', '"7.11.3"')]
    two_parts = 'python = "3.8"\nminimum = "3.8"\n'
    assert _sites("python", two_parts, two_parts.replace("3.8", "3.9", 1)) == []
