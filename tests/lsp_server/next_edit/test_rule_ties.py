"""What ties a site to the example beyond the changed text (read in the ninth held-out set, trio, tox,
isort and twine, and in the tenth, pre-commit, nox, invoke and coverage): the variable an assignment
writes, a keyword spelled as its value is, a receiver wrapped rather than replaced, whether a type
annotated a parameter or a field, a name bound for a read that follows, how a function returns."""

from __future__ import annotations

from lsp_server.completion.syntax import encode
from lsp_server.next_edit.diffs import changed_span, deletion_slides
from tests.lsp_server.next_edit.test_edit_rules import _agreed_sites, _learned, _sites

RAISES = (
    "def test_a():\n    with pytest.raises(Failed):\n        run(1)\n\n\n"
    "def test_b():\n    with pytest.raises(Failed):\n        run(2)\n\n\n"
    "def test_c():\n    with pytest.raises(Failed):\n        run(3)\n    assert exc.value.code == 3\n"
)


def test_a_name_bound_with_as_is_bound_only_where_a_read_of_it_follows() -> None:
    after = RAISES.replace("raises(Failed):", "raises(Failed) as exc:", 1)
    assert _sites("python", RAISES, after) == [("pytest.raises(Failed)", "pytest.raises(Failed) as exc")]


def test_a_keyword_typed_is_no_half_typed_name_where_the_file_holds_it_only_as_a_longer_words_start() -> None:
    before = "with open(a):\n    assert a\n"
    after = before.replace("open(a):", "open(a) as handle:")
    learned = _learned("python", before, after)
    assert learned is not None and learned.rule.after[-1] == b" as handle"


def test_a_return_type_is_written_on_the_functions_that_return_as_the_examples_did() -> None:
    before = (
        "class C:\n    def run(self, line: str, **kw: Any):\n        return self._run(line)\n\n"
        "    def sudo(self, line: str, **kw: Any):\n        return self._sudo(line)\n\n"
        "    def prefix(self, line: str):\n        self.prefixes.append(line)\n        yield\n\n"
        "    def clear(self, line: str):\n        self.prefixes.clear()\n\n"
        "    def find(self, line: str):\n        return self._find(line)\n"
    )
    once = before.replace("**kw: Any):", "**kw: Any) -> Result:", 1)
    twice = once.replace("**kw: Any):", "**kw: Any) -> Result:", 1)
    assert _agreed_sites("python", before, once, twice) == [
        (
            "def find(self, line: str):\n        return self._find(line)",
            "def find(self, line: str) -> Result:\n        return self._find(line)",
        )
    ]


def test_a_value_wrapped_is_wrapped_where_the_same_variable_is_assigned_only() -> None:
    before = (
        "def parse(parts):\n    machine = parts[-1]\n    other = parts[-1]\n    return machine\n\n\n"
        "def parse_again(parts):\n    machine = parts[-1]\n    return machine\n"
    )
    after = before.replace("machine = parts[-1]", "machine = normalize_isa(parts[-1])", 1)
    assert _sites("python", before, after) == [("machine = parts[-1]", "machine = normalize_isa(parts[-1])")]


def test_a_variable_assigned_another_kind_of_value_is_so_assigned_where_it_is_assigned_alike() -> None:
    before = "if x:\n    comments = None\nelse:\n    comments = None\n    names = None\n"
    after = before.replace("comments = None", "comments = []", 1)
    assert _sites("python", before, after) == [("comments = None", "comments = []")]


def test_text_inserted_after_a_keyword_passed_its_own_name_is_inserted_where_the_call_passes_it() -> None:
    before = "wrap(a, comments=comments)\nwrap(b, comments=comments)\nwrap(c, comments)\n"
    after = before.replace("comments=comments)", "comments=comments or ())", 1)
    assert _sites("python", before, after) == [("comments=comments", "comments=comments or ()")]


def test_text_inserted_after_a_plain_variable_still_waits_for_a_second_example() -> None:
    before = 'a = f"{src_file}"\nb = f"{src_file}"\n'
    after = before.replace("{src_file}", "{src_file.as_posix()}", 1)
    learned = _learned("python", before, after)
    assert learned is not None and learned.rule.inserts
    assert _sites("python", before, after) == []


def test_a_receiver_wrapped_in_a_conversion_is_wrapped_under_the_same_member_only() -> None:
    before = "a = value.replace('x', 'y')\nb = value.startswith('z')\nc = value.replace('u', 'v')\n"
    after = before.replace("value.replace('x'", "str(value).replace('x'", 1)
    assert _sites("python", before, after) == [("value.replace", "str(value).replace")]


def test_a_receiver_replaced_still_reaches_its_other_members() -> None:
    before = "a = old_mod.load(x)\nb = old_mod.dump(y)\n"
    after = before.replace("old_mod.load", "new_mod.load", 1)
    assert _sites("python", before, after) == [("old_mod.dump", "new_mod.dump")]


def test_a_fields_type_changed_is_not_changed_for_a_parameter_of_its_name() -> None:
    before = (
        "class PackageFile:\n    comment: Optional[str]\n    digest: Optional[str]\n\n"
        "    def __init__(self, comment: Optional[str]) -> None:\n        self.comment = comment\n\n"
        "\nclass Other:\n    comment: Optional[str]\n"
    )
    after = before.replace("    comment: Optional[str]\n", "    comment: str\n", 1)
    learned = _learned("python", before, after)
    assert learned is not None and learned.rule.annotates == ("declaration", b"comment")
    assert _sites("python", before, after) == [("Optional[str]", "str")]  # the other class's field


def test_a_parameters_type_changed_is_not_changed_for_a_field_of_its_name() -> None:
    before = (
        "class P:\n    comment: Optional[str]\n\n"
        "    def a(self, comment: Optional[str]) -> None:\n        pass\n\n"
        "    def b(self, comment: Optional[str]) -> None:\n        pass\n"
    )
    after = before.replace("a(self, comment: Optional[str])", "a(self, comment: str)", 1)
    assert _sites("python", before, after) == [("Optional[str]", "str")]  # b's parameter, not the field


def test_an_entry_added_to_one_map_of_a_name_waits_for_a_second_example() -> None:
    before = "exc_map = {\n    OSError: ConnectError,\n}\nexc_map = {\n    OSError: ReadError,\n}\n"
    after = before.replace("ConnectError,\n", "ConnectError,\n    ssl.SSLError: ConnectError,\n", 1)
    learned = _learned("python", before, after)
    assert learned is not None and learned.rule.inserts  # found in the httpcore history
    assert _sites("python", before, after) == []


def test_brackets_dropped_around_a_value_are_not_dropped_where_it_spans_lines() -> None:
    before = (
        'def f():\n    content = (\n        "a"\n    )\n    content = (\n        "b"\n        "c"\n    )\n'
        '    content = (\n        "d"\n    )\n'
    )
    after = before.replace('content = (\n        "a"\n    )', 'content = "a"', 1)
    # found in the isort history: ``content = "b"`` then ``"c"`` on its own line is no statement
    assert _sites("python", before, after) == [('content = (\n        "d"\n    )', 'content = "d"')]


def test_an_argument_wrapped_in_a_call_is_wrapped_where_a_call_passes_one_alike() -> None:
    before = "a = f.get(t * 1e6)\nb = f.get(t, tzinfo=tz)\nc = f.get(u * 1e3)\nd = f.get(arw)\n"
    after = before.replace("f.get(t * 1e6)", "f.get(int(t * 1e6))", 1)
    # found in the arrow history: the argument list is ``get``'s, not ``int``'s, so never a hole;
    # and what is converted is a product, not any argument
    assert _sites("python", before, after) == [("f.get(u * 1e3)", "f.get(int(u * 1e3))")]


def test_a_line_deleted_above_one_that_begins_alike_is_deleted_where_it_stands_again() -> None:
    before = (
        "def a(sock):\n    sock.settimeout(1)\n    sock.bind(host)\n\n\n"
        "def b(sock):\n    sock.settimeout(1)\n    sock.bind(other)\n"
    )
    after = before.replace("    sock.settimeout(1)\n", "", 1)
    assert changed_span(encode(before), encode(after))[:2] == (22, 45)  # "settimeout(1)\n    sock."
    # found in the anyio history: slid to the whole line, the deletion makes a rule
    assert _sites("python", before, after) == [("    sock.settimeout(1)\n", "")]
    assert deletion_slides(b"xabab", 1, 3) == [(1, 3), (2, 4), (3, 5)]


def test_lines_of_logic_deleted_once_wait_for_a_second_example() -> None:
    guard = "    if inc is NotImplemented:\n        return NotImplemented\n"
    before = "".join(
        f"def {name}(self, other):\n    inc = f(other)\n{guard}    return inc\n\n\n" for name in "abc"
    )
    once = before.replace(guard, "", 1)
    # found in the boltons history: two of fourteen such guards deleted
    assert _sites("python", before, once) == []
    assert _agreed_sites("python", before, once, once.replace(guard, "", 1)) == [(guard, "")]


def test_a_value_rewritten_as_a_call_is_rewritten_where_it_is_a_receiver_too() -> None:
    before = "num = version[len('python'):]\ninfo = version[len('python'):].split('.')\nn = -x[len(p):]\n"
    after = before.replace("version[len('python'):]", "version.removeprefix('python')", 1)
    assert _sites("python", before, after) == [
        ("version[len('python'):]", "version.removeprefix('python')"),
        ("x[len(p):]", "x.removeprefix(p)"),
    ]


def test_a_value_rewritten_as_a_lower_expression_is_not_rewritten_where_it_is_a_receiver() -> None:
    before = "a = parse_time(t)\nb = parse_time(t).hour\nc = parse_time(u)\n"
    after = before.replace("parse_time(t)", "parse_time(t) or now()", 1)
    assert _sites("python", before, after) == [("parse_time(u)", "parse_time(u) or now()")]


def test_a_value_too_common_to_tell_is_told_by_the_attribute_it_is_assigned_to() -> None:
    before = (
        "class A:\n    def __init__(self, params):\n        self.params = params or []\n"
        "        self.other = other or []\n\n\n"
        "class B:\n    def __init__(self, params):\n        self.params = params or []\n"
    )
    after = before.replace("params or []", "list(params)", 1)
    assert _sites("python", before, after) == [("self.params = params or []", "self.params = list(params)")]


RETURNS = (
    "class A:\n    def close(self):\n        self.f.close()\n\n"
    "    def reset(self):\n        self.n = 0\n\n"
    "    def size(self):\n        return self.n\n\n"
    "    def read(self):\n        raise NotImplementedError\n\n"
    "    def items(self):\n        yield 1\n"
)


def test_none_as_the_return_type_of_a_function_returning_nothing_is_written_where_others_return_nothing() -> (
    None
):
    after = RETURNS.replace("def close(self):", "def close(self) -> None:", 1)
    # not on size (a value), read (abstract: it raises, its overrides return) nor items (a generator)
    assert _sites("python", RETURNS, after) == [
        ("def reset(self):\n        self.n = 0", "def reset(self) -> None:\n        self.n = 0")
    ]


def test_another_return_type_after_one_example_is_that_functions_own() -> None:
    after = RETURNS.replace("def size(self):", "def size(self) -> int:", 1)
    assert _sites("python", RETURNS, after) == []


def test_a_variable_dropped_from_an_assignment_is_dropped_only_where_nothing_reads_it_after() -> None:
    before = (
        "def test_a(app):\n    res = app.get('/a', status=404)\n\n\n"
        "def test_b(app):\n    res = app.get('/b', status=404)\n\n\n"
        "def test_c(app):\n    res = app.get('/c', status=200)\n    assert res.body\n"
    )
    after = before.replace("res = app.get('/a'", "app.get('/a'", 1)
    # not test_c's: it reads res next (pyramid's history)
    assert _sites("python", before, after) == [
        ("res = app.get('/b', status=404)", "app.get('/b', status=404)")
    ]


def test_a_statement_guarded_by_a_value_it_reads_is_guarded_where_it_reads_that_value_only() -> None:
    before = (
        "def on_options(req, resp, allowed):\n    resp.set_header('Allow', allowed)\n"
        "    resp.set_header('Content-Length', '0')\n\n\n"
        "def on_bad(req, resp, allowed):\n    resp.set_header('Allow', allowed)\n"
        "    resp.set_header('Content-Length', '0')\n"
    )
    after = before.replace(
        "    resp.set_header('Allow', allowed)\n",
        "    if allowed:\n        resp.set_header('Allow', allowed)\n",
        1,
    )
    # falcon's history: not the Content-Length headers, which do not read allowed
    assert _sites("python", before, after) == [
        ("resp.set_header('Allow', allowed)", "if allowed:\n        resp.set_header('Allow', allowed)")
    ]
