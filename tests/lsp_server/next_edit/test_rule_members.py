"""What ``self`` has at a site (found reading the seventh untouched set, ``bench/next_edit``): a rule
whose replacement calls a method on ``self`` of its own goes to the classes where that method can
be read: the example's class (the user writes the method there), a class defining it, a subclass
of the example's class, or, where the method may be inherited, a class of the same bases."""

from __future__ import annotations

from lsp_server.next_edit.member_bindings import MemberHome, merged
from lsp_server.next_edit.rule_agreement import agree
from tests.lsp_server.next_edit.test_edit_rules import _apply, _learned, _sites, _two_examples

TWO_CLASSES = (
    "class TestZones(object):\n"
    "    def test_a(self):\n        assert res == expected\n\n"
    "    def test_b(self):\n        assert result == wanted\n\n\n"
    "class TestInput(object):\n"
    "    def test_c(self):\n        assert got == text\n"
)
SAME_ZONE = "self.assert_same_zone(res, expected)"


def _olds(sites: list[tuple[str, str]]) -> list[str]:
    return [old for old, _ in sites]


def test_a_method_not_written_yet_is_called_only_in_the_examples_class() -> None:
    after = TWO_CLASSES.replace("assert res == expected", SAME_ZONE)
    learned = _learned("python", TWO_CLASSES, after)
    assert learned is not None
    assert learned.rule.members == MemberHome((b"assert_same_zone",), b"TestZones", None)
    assert _apply("python", learned.rule, after, (learned.start, learned.end)) == [
        ("assert result == wanted", "self.assert_same_zone(result, wanted)")
    ]


def test_a_class_defining_the_method_or_deriving_from_the_examples_class_gets_it_too() -> None:
    helper = "    def assert_same_zone(self, one, two):\n        assert one.tzinfo is two.tzinfo\n\n"
    defined = TWO_CLASSES + "\n" + helper
    derived = defined + "\n\nclass TestMore(TestZones):\n    def test_d(self):\n        assert x1 == y1\n"
    other = derived + "\n\nclass TestOther(Base):\n    def test_e(self):\n        assert x2 == y2\n"
    sites = _sites("python", other, other.replace("assert res == expected", SAME_ZONE))
    assert _olds(sites) == ["assert result == wanted", "assert got == text", "assert x1 == y1"]


def test_a_method_assigned_on_self_or_in_the_class_body_is_defined_there() -> None:
    text = (
        "class A(object):\n    def test_a(self):\n        check(res)\n\n\n"
        "class B(object):\n    pick = staticmethod(first)\n\n    def test_b(self):\n        check(out)\n\n\n"
        "class C(object):\n    def setup(self):\n        self.pick = last\n\n"
        "    def test_c(self):\n        check(x)\n\n\n"
        "class D(object):\n    def test_d(self):\n        check(y)\n"
    )
    sites = _sites("python", text, text.replace("check(res)", "check(self.pick(res))"))
    assert _olds(sites) == ["check(out)", "check(x)"]


def test_an_attribute_read_as_a_value_is_not_checked() -> None:
    text = "class A:\n    def f(self):\n        run(a)\n\n\nclass B:\n    def g(self):\n        run(b)\n"
    learned = _learned("python", text, text.replace("run(a)", "run(a, limit=self.limit)"))
    assert learned is not None and learned.rule.members is None


def test_a_method_the_examples_class_may_inherit_goes_to_classes_of_the_same_bases() -> None:
    text = (
        "class TestA(unittest.TestCase):\n    def test_a(self):\n        assert a == b\n\n\n"
        "class TestB(unittest.TestCase):\n    def test_b(self):\n        assert c == d\n\n\n"
        "class TestC(object):\n    def test_c(self):\n        assert e == f\n"
    )
    sites = _sites("python", text, text.replace("assert a == b", "self.assertEqual(a, b)"))
    assert sites == [("assert c == d", "self.assertEqual(c, d)")]


def test_a_site_outside_any_class_has_no_self() -> None:
    text = "class A:\n    def f(self):\n        run(a)\n\n    def g(self):\n        run(b)\n\n\n"
    text += "def h():\n    run(c)\n"
    sites = _sites("python", text, text.replace("run(a)", "run(a, self.pool())"))
    assert _olds(sites) == ["run(b)"]


def test_a_rule_reading_no_attribute_of_self_is_not_checked() -> None:
    learned = _learned("python", "def f():\n    run(a)\n", "def f():\n    run(a, pool)\n")
    assert learned is not None and learned.rule.members is None


def test_two_examples_keep_what_they_share() -> None:
    once = TWO_CLASSES.replace("assert res == expected", SAME_ZONE)
    twice = once.replace("assert got == text", "self.assert_same_zone(got, text)")
    first, second = _two_examples("python", TWO_CLASSES, once, twice)
    both = agree(first.rule, second.rule)
    assert both is not None and both.members == MemberHome((b"assert_same_zone",), None, None)
    home = MemberHome((b"a", b"b"), b"A", None)
    assert merged(home, MemberHome((b"b",), b"A", b"(T)")) == MemberHome((b"b",), b"A", None)
    assert merged(home, MemberHome((b"c",), b"A", None)) is None
    assert merged(home, None) is None


def test_a_method_of_a_nested_class_is_not_the_outer_classs() -> None:
    text = (
        "class A(object):\n    def test_a(self):\n        check(res)\n\n\n"
        "class B(object):\n    class Inner:\n        pick = first\n\n"
        "    def test_b(self):\n        check(out)\n"
    )
    assert _sites("python", text, text.replace("check(res)", "check(self.pick(res))")) == []
