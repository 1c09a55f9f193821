"""Rules that stay quiet where a site only looks like the example (found by replaying held-out
histories, ``bench/next_edit``): a keyword argument's name, an operator alone, an attribute written
rather than read; and a replacement over lines indented as its site is; no site rewritten twice; a
function of the example's name defined elsewhere. Comments: ``test_rule_comments.py``."""

from __future__ import annotations

import pytest

from lsp_server.next_edit.rule_agreement import agree
from tests.lsp_server.next_edit.test_edit_rules import _agreed_sites, _apply, _sites, _two_examples


def test_a_replacement_over_lines_is_indented_as_each_site_is() -> None:
    before = "fetch(url)\n\n\ndef g():\n    fetch(u2)\n"
    after = "fetch(\n    url,\n    timeout=t,\n)\n\n\ndef g():\n    fetch(u2)\n"
    assert _sites("python", before, after) == [
        ("fetch(u2)", "fetch(\n        u2,\n        timeout=t,\n    )")
    ]


def test_a_kept_keyword_argument_keeps_its_name_only_its_value_varies() -> None:
    before = (
        "a = Column(Integer, primary_key=True, index=True)\n"
        "b = Column(String, unique=True, index=True)\n"
        "c = Column(Text, primary_key=True, index=True)\n"
    )
    after = before.replace("primary_key=True, index=True", "primary_key=True", 1)
    assert _sites("python", before, after) == [(", primary_key=True, index=True)", ", primary_key=True)")]


def test_an_operator_between_holes_is_no_shape_to_recognise_a_wrap_by() -> None:
    before = 'if "push" in scope["extensions"]:\n    pass\nif code in (204, 304):\n    pass\n'
    after = before.replace('if "push" in', 'if "extensions" in scope and "push" in', 1)
    assert _sites("python", before, after) == []


def test_an_attribute_read_becoming_a_name_is_not_repeated_where_the_attribute_is_written() -> None:
    before = "x = info.in_ == 1\ny = info.in_ == 2\ninfo.in_ = 3\nfor info.in_ in z:\n    pass\n"
    after = before.replace("x = info.in_", "x = info_in", 1)
    assert _sites("python", before, after) == [("info.in_", "info_in")]


def test_a_type_changed_in_one_annotation_is_changed_where_it_annotates_the_same_name_only() -> None:
    before = (
        "def a(nullable: Optional[bool] = None, name: Optional[str] = None):\n    pass\n\n\n"
        "def b(nullable: Optional[bool] = None, comment: Optional[str] = None) -> Optional[bool]:\n"
        "    pass\n"
    )
    after = before.replace("nullable: Optional[bool]", "nullable: Union[bool, Literal[False], None]", 1)
    assert _sites("python", before, after) == [("Optional[bool]", "Union[bool, Literal[False], None]")]


def test_a_parameters_type_widened_is_widened_where_the_same_name_is_typed_so_only() -> None:
    before = (
        "def extract(tar: TarFile, path: str) -> None:\n    pass\n\n\n"
        "def extract_all(tar: TarFile, path: str) -> None:\n    pass\n\n\n"
        "def validate(member: TarInfo, base: str) -> None:\n    pass\n"
    )
    after = before.replace("path: str", "path: Path | str", 1)
    assert _sites("python", before, after) == [
        ("path: str", "path: Path | str")
    ]  # found in the build history


def test_a_type_changed_for_an_attribute_is_changed_where_it_annotates_that_attribute_only() -> None:
    before = (
        "class R:\n    def __init__(self):\n        self._tokdict: dict[str, Any] = {}\n"
        "        self._names: dict[int, Any] = {}\n\n    def copy(self):\n"
        "        other._tokdict: dict[str, Any] = {}\n"
    )
    after = before.replace("self._tokdict: dict[str, Any]", "self._tokdict: dict[str, list[Any]]", 1)
    # found in the pyparsing history, where the change was for one attribute only
    assert _sites("python", before, after) == [("dict[str, Any]", "dict[str, list[Any]]")]


def test_two_examples_annotating_different_names_change_the_type_wherever_it_annotates() -> None:
    before = "def a(x: Optional[int], y: Optional[str], z: Optional[bytes]) -> Optional[int]:\n    pass\n"
    once = before.replace("x: Optional[int]", "x: int", 1)
    twice = once.replace("y: Optional[str]", "y: str", 1)
    first, second = _two_examples("python", before, once, twice)
    assert _apply("python", first.rule, once, (first.start, first.end)) == []  # no other x
    both = agree(first.rule, second.rule)
    assert both is not None and both.annotates is None
    assert _apply("python", both, twice, (second.start, second.end)) == [
        ("Optional[bytes]", "bytes"),
        ("Optional[int]", "int"),
    ]


def test_a_type_only_spelled_otherwise_is_respelled_wherever_it_is_written() -> None:
    before = (
        "def a(body: Iterator[bytes], n: int) -> Iterator[str]:\n    rows: Iterator[bytes] = it\n\n\n"
        "def b(x: Union[int, str]) -> Union[str, None]:\n    pass\n"
    )
    qualified = before.replace("body: Iterator[bytes]", "body: abc.Iterator[bytes]", 1)
    assert _sites("python", before, qualified) == [
        ("Iterator[str]", "abc.Iterator[str]"),
        ("Iterator[bytes]", "abc.Iterator[bytes]"),
    ]
    piped = before.replace("x: Union[int, str]", "x: int | str", 1)
    assert _sites("python", before, piped) == [("Union[str, None]", "str | None")]


def test_a_generics_defaulted_arguments_are_dropped_where_the_same_generic_is_written() -> None:
    before = (
        "def a() -> Generator[str, None, None]:\n    pass\n\n\n"
        "def b(x: Iterable[str, None, None]) -> Generator[int, None, None]:\n    pass\n"
    )
    after = before.replace("Generator[str, None, None]", "Generator[str]", 1)
    # the generic's name is fixed as a callee is (found in the flake8 and build histories)
    assert _sites("python", before, after) == [("Generator[int, None, None]", "Generator[int]")]


def test_a_statement_wrapped_whole_is_no_rule_of_every_statement_of_its_kind() -> None:
    before = "async def a(self):\n    await self.flush(1)\n    await self.read(2)\n    await self.flush(3)\n"
    after = before.replace("    await self.flush(1)\n", "    with guard():\n        await self.flush(1)\n", 1)
    assert _sites("python", before, after) == []  # where a statement is wrapped is chosen per place


def test_a_statement_inserted_before_a_kept_if_is_no_rule_of_every_if() -> None:
    before = (
        "def a(limit):\n    if not ready:\n        setup()\n\n\n"
        "def b():\n    if not ready:\n        setup()\n    if x:\n        y()\n"
    )
    inserted = "    if limit < 0:\n        limit = 0\n    if not ready:\n"
    assert _sites("python", before, before.replace("    if not ready:\n", inserted, 1)) == []


def test_a_site_that_already_reads_as_the_result_is_not_rewritten_again() -> None:
    before = "a = sorted(x)\nb = sorted(y)\nc = sorted(list(z))\n"
    after = before.replace("sorted(x)", "sorted(list(x))", 1)
    assert _sites("python", before, after) == [("sorted(y)", "sorted(list(y))")]  # not list(list(z))


def test_a_site_the_result_already_stands_around_is_left_alone() -> None:
    before = "x = d.keys()\ny = e.keys()\nz = list(f.keys())\n"
    after = before.replace("d.keys()", "list(d.keys())", 1)
    assert _sites("python", before, after) == [("e.keys()", "list(e.keys())")]  # not list(list(f.keys()))


def test_a_parameter_added_to_methods_is_not_added_to_functions_defined_elsewhere() -> None:
    before = (
        "def test_spec(pm):\n    class HookSpec:\n        def he_myhook1(arg1) -> None:\n            pass\n\n"
        "        def he_myhook2(arg1) -> None:\n            pass\n\n"
        "        def he_myhook3(arg1) -> None:\n            pass\n\n\n"
        "def test_impl():\n    def he_myhook1(arg1) -> None:\n        pass\n\n\n"
        "def he_other(arg1) -> None:\n    pass\n"
    )
    once = before.replace("he_myhook1(arg1)", "he_myhook1(self, arg1)", 1)
    assert _sites("python", before, once) == []  # test_impl's he_myhook1 is another function
    twice = once.replace("he_myhook2(arg1)", "he_myhook2(self, arg1)", 1)
    first, second = _two_examples("python", before, once, twice)
    both = agree(first.rule, second.rule)
    assert both is not None
    assert _apply("python", both, twice, (second.start, second.end)) == [
        (
            "def he_myhook3(arg1) -> None:\n            pass",
            "def he_myhook3(self, arg1) -> None:\n            pass",
        )
    ]  # not test_impl's he_myhook1, nor he_other: both examples were methods


def test_a_change_to_a_method_repeats_at_the_method_of_its_name_in_another_class() -> None:
    method = "    def __init__(self):\n        pass\n"
    before = f"class A:\n{method}\n\nclass B:\n{method}"
    after = before.replace("__init__(self):", "__init__(self) -> None:", 1)
    assert _sites("python", before, after) == [
        ("def __init__(self):\n        pass", "def __init__(self) -> None:\n        pass")
    ]


def test_a_parameter_is_not_added_to_a_function_that_has_it() -> None:
    before = "class A:\n" + "".join(f"    def {f}:\n        pass\n\n" for f in ("f(arg)", "g(self)", "h(x)"))
    once = before.replace("f(arg)", "f(self, arg)", 1)
    twice = once.replace("h(x)", "h(self, x)", 1)
    first, second = _two_examples("python", before, once, twice)
    both = agree(first.rule, second.rule)
    assert both is not None
    assert _apply("python", both, twice, (second.start, second.end)) == []  # not def g(self, self)


def test_a_parameter_renamed_to_one_the_function_has_elsewhere_is_still_offered() -> None:
    signature = "(url, *, ssl_context: SSLContext | None = None, trust_env: bool = True, verify: Any = None)"
    before = f"def get{signature}:\n    pass\n\n\ndef post{signature}:\n    pass\n"
    after = before.replace("ssl_context: SSLContext | None = None", "verify: SSLContext | bool = True", 1)
    assert _sites("python", before, after) == [
        ("ssl_context: SSLContext | None = None", "verify: SSLContext | bool = True")
    ]  # the old verify is the user's next deletion


def test_a_deletion_whose_result_has_a_wider_shape_still_finds_its_sites() -> None:
    before = "assert pipe(a).converter.__annotations__ == x\nassert pipe(b).converter.__annotations__ == y\n"
    after = before.replace("pipe(a).converter.__annotations__", "pipe(a).__annotations__", 1)
    assert _sites("python", before, after) == [
        ("pipe(b).converter.__annotations__", "pipe(b).__annotations__")
    ]  # pipe(b).converter.__annotations__ is also □.__annotations__, the result's shape


@pytest.mark.parametrize(
    ("before", "once", "twice"),
    [
        pytest.param(
            "check(a == 1)\nassert p == q\nassert r == s\nassert u == v\n",
            "check(a == 1)\nassert q == p\nassert r == s\nassert u == v\n",
            "check(a == 1)\nassert q == p\nassert s == r\nassert u == v\n",
            id="operands swapped",
        ),
        pytest.param(
            "go = a and b\nstop = c and d\nok = e and f\n",
            "go = (a and b)\nstop = c and d\nok = e and f\n",
            "go = (a and b)\nstop = (c and d)\nok = e and f\n",
            id="brackets added",
        ),
        pytest.param(
            "assert size(a) == b\nassert c.d == 2\nassert e == f\n",
            "assert size(a) is b\nassert c.d == 2\nassert e == f\n",
            "assert size(a) is b\nassert c.d is 2\nassert e == f\n",
            id="an operator spelled as a word",
        ),
    ],
)
def test_two_examples_that_only_move_or_bracket_holes_stay_quiet(before: str, once: str, twice: str) -> None:
    assert _agreed_sites("python", before, once, twice) == []


def test_two_examples_that_write_a_word_of_their_own_still_repeat() -> None:
    before = "def test_a():\n    pass\n\n\ndef test_b():\n    pass\n\n\ndef test_c():\n    pass\n"
    once = before.replace("def test_a():", "def test_a() -> None:", 1)
    twice = once.replace("def test_b():", "def test_b() -> None:", 1)
    assert _agreed_sites("python", before, once, twice) == [
        ("def test_c():\n    pass", "def test_c() -> None:\n    pass")
    ]


def test_a_flag_set_at_one_call_is_not_set_at_the_others() -> None:
    before = 'watch(job, "run")\nwatch(task, "stop")\nwatch(job, "start")\n'
    for flag in ("verbose=True", "forward=Forward.ALWAYS"):
        after = before.replace('watch(job, "run")', f'watch(job, "run", {flag})', 1)
        assert _sites("python", before, after) == [], flag


def test_an_argument_with_a_value_that_varies_is_still_added_at_the_other_calls() -> None:
    before = 'watch(job, "run")\nwatch(task, "stop")\n'
    after = before.replace('watch(job, "run")', 'watch(job, "run", delay=delay)', 1)
    assert _sites("python", before, after) == [('watch(task, "stop")', 'watch(task, "stop", delay=delay)')]


def test_two_examples_whose_kept_part_is_a_hole_at_different_depths_agree() -> None:
    before = (
        "limits: Optional[Dict[str, int]] = None\nname: Optional[Text] = None\n"
        "other = 1\nsize: Optional[int] = None\n"
    )
    once = before.replace("limits: Optional[Dict[str, int]]", "limits: Dict[str, int] | None", 1)
    twice = once.replace("name: Optional[Text]", "name: Text | None", 1)
    first, second = _two_examples("python", before, once, twice)
    both = agree(first.rule, second.rule)
    assert both is not None
    assert _apply("python", both, twice, (second.start, second.end)) == [("Optional[int]", "int | None")]


def test_new_code_written_in_place_of_a_line_is_not_written_at_its_copies() -> None:
    before = "class Box:\n    size = length\n\n\nclass Bag:\n    size = length\n"
    method = "def size(self) -> int:\n        return len(self.items) + self.extra_items"
    after = before.replace("size = length", method, 1)
    assert _sites("python", before, after) == []


def test_a_short_replacement_of_a_line_is_still_repeated_at_its_copies() -> None:
    before = "class Box:\n    size = length\n\n\nclass Bag:\n    size = length\n"
    after = before.replace("size = length", "size = count", 1)
    assert _sites("python", before, after) == [("size = length", "size = count")]


def test_a_negation_rewritten_once_is_no_rule_of_its_own() -> None:
    before = "if not years and days < 1:\n    pass\nif not now:\n    pass\nif not texts:\n    pass\n"
    after = before.replace("not years", "years == 0", 1)
    assert _sites("python", before, after) == []  # ``not`` is an operator, not a statement's keyword


def test_two_examples_that_leave_a_word_out_still_repeat() -> None:
    before = "".join(f"def test_{name}() -> None:\n    pass\n\n\n" for name in "abc").rstrip("\n") + "\n"
    once = before.replace("def test_a() -> None:", "def test_a():", 1)
    twice = once.replace("def test_b() -> None:", "def test_b():", 1)
    # found in the more-itertools history: return types dropped from a file's tests
    assert _agreed_sites("python", before, once, twice) == [
        ("def test_c() -> None:\n    pass", "def test_c():\n    pass")
    ]
