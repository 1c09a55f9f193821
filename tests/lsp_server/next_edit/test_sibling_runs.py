"""Rules over a run of a list's items (``sibling_runs.py``): an edit across two parameters, a
parameter inserted after another, an argument run of one function's calls, parameters given types
(the same names typed wherever they stand); and a site laid out on other lines than the example is
not re-flowed."""

from __future__ import annotations

from tests.lsp_server.next_edit.test_edit_rules import _sites


def test_an_edit_across_two_parameters_repeats_where_the_same_two_stand() -> None:
    before = (
        "def get(url, follow: bool = False, allow: bool = False, timeout=None):\n    pass\n\n\n"
        "def post(url, data, follow: bool = False, allow: bool = False, timeout=None):\n    pass\n\n\n"
        "def put(url, follow: bool = False, timeout=None):\n    pass\n"
    )
    after = before.replace("follow: bool = False, allow: bool = False", "follow: bool | None = None", 1)
    assert _sites("python", before, after) == [
        (", follow: bool = False, allow: bool = False,", ", follow: bool | None = None,")
    ]


def test_a_parameter_inserted_after_another_is_inserted_after_it_in_the_other_functions() -> None:
    parameters = (
        "    default: Any = None,\n    examples: list | None = None,\n    deprecated: bool = False,\n"
    )
    before = (
        f"def query(\n{parameters}):\n    pass\n\n\n"
        f"def header(\n{parameters}):\n    pass\n\n\n"
        "def body(\n    default: Any = None,\n    deprecated: bool = False,\n):\n    pass\n"
    )
    after = before.replace(
        "    examples: list | None = None,\n",
        "    examples: list | None = None,\n    openapi: dict | None = None,\n",
        1,
    )
    assert _sites("python", before, after) == [
        (
            "examples: list | None = None,\n    deprecated: bool = False,",
            "examples: list | None = None,\n    openapi: dict | None = None,\n    deprecated: bool = False,",
        )
    ]  # anchored by the parameters on both sides: not in body()


def test_an_argument_run_repeats_at_the_calls_of_the_same_function_only() -> None:
    before = "send(a, retries=1, backoff=2)\nsend(b, retries=1, backoff=2)\npost(c, retries=1, backoff=2)\n"
    after = before.replace("retries=1, backoff=2", "retry=Retry(1, 2)", 1)
    assert _sites("python", before, after) == [(", retries=1, backoff=2)", ", retry=Retry(1, 2))")]


def test_a_site_laid_out_on_other_lines_than_the_example_is_not_re_flowed() -> None:
    before = (
        "def a(\n    lang: str = Argument(None)\n):\n    pass\n\n\n"
        "def b(lang: str = Argument(None)):\n    pass\n\n\n"
        "def c(\n    lang: str = Argument(None)\n):\n    pass\n"
    )
    after = before.replace("Argument(None)\n)", "Argument(None),\n)", 1)
    assert _sites("python", before, after) == [
        ("(\n    lang: str = Argument(None)\n)", "(\n    lang: str = Argument(None),\n)")
    ]


def test_an_item_kept_beside_the_run_matches_only_an_item_of_its_kind() -> None:
    before = (
        't1 = Table("a", m, Column("x", Integer), CheckConstraint("x > 0"), schema=s)\n'
        't2 = Table("b", m, Column("x", Integer), Column("y", Integer), schema=s)\n'
        't3 = Table("c", m, Column("x", Integer), schema=s, quote=True)\n'
        't4 = Table("d", m, Column("x", Integer), CheckConstraint("x < 0"), schema=s)\n'
    )
    after = before.replace(
        'Column("x", Integer), CheckConstraint("x > 0")',
        '*col_and_check("x", Integer, CheckConstraint("x > 0"))',
        1,
    )
    assert _sites("python", before, after) == [
        (
            'm, Column("x", Integer), CheckConstraint("x < 0"),',
            'm, *col_and_check("x", Integer, CheckConstraint("x < 0")),',
        )
    ]  # not where a Column or a keyword argument follows


def test_a_parameter_inserted_in_a_long_signature_repeats_in_the_other_long_signatures() -> None:
    filler = "".join(
        f"    option_{i}: Annotated[int, Doc('the option number {i}')] = {i},\n" for i in range(30)
    )
    signature = f"(\n{filler}    example: Any = None,\n    deprecated: bool = False,\n)"
    before = f"def query{signature}:\n    pass\n\n\ndef header{signature}:\n    pass\n"
    after = before.replace(
        "    example: Any = None,\n", "    example: Any = None,\n    openapi: dict | None = None,\n", 1
    )
    assert len(signature) > 1_500
    assert _sites("python", before, after) == [
        (
            "example: Any = None,\n    deprecated: bool = False,",
            "example: Any = None,\n    openapi: dict | None = None,\n    deprecated: bool = False,",
        )
    ]


def test_a_parameter_inserted_in_a_function_repeats_in_a_method_with_the_same_neighbours() -> None:
    before = (
        "def install(\n    max_length: int = 10,\n    max_string: int = 80,\n):\n    pass\n\n\n"
        "class Traceback:\n    def __init__(\n        self,\n        max_length: int = 10,\n"
        "        max_string: int = 80,\n    ):\n        pass\n"
    )
    after = before.replace(
        "    max_string: int = 80,\n", "    max_string: int = 80,\n    max_depth: int = 0,\n", 1
    )
    assert _sites("python", before, after) == [
        (
            "max_string: int = 80,\n    )",
            "max_string: int = 80,\n        max_depth: int = 0,\n    )",
        )
    ]


def _returned_checks(*titles: str) -> str:
    calls = (f'check(\n        note=note,\n        title="{title}",\n    )(x)' for title in titles)
    return "    return " + " or ".join(calls) + "\n"


def test_an_argument_run_reading_a_name_still_to_be_bound_repeats_in_the_example_function_only() -> None:
    before = (
        f"def first(x):\n    note = 1\n{_returned_checks('a', 'b')}\n\n"
        f"def second(x):\n    note = 2\n{_returned_checks('c', 'd')}"
    )
    written = 'note=note,\n        kind=sized,\n        title="a"'
    after = before.replace('note=note,\n        title="a"', written, 1)
    assert _sites("python", before, after) == [
        ('note=note,\n        title="b",', 'note=note,\n        kind=sized,\n        title="b",')
    ]  # ``sized`` is to be assigned in first(), not in second()


def test_a_parameter_dropped_is_not_dropped_where_the_function_reads_it() -> None:
    before = (
        "def test_a(client, scratch, patch):\n    patch(client)\n\n\n"
        "def test_b(client, scratch, patch):\n    patch(scratch)\n\n\n"
        "def test_c(client, scratch, patch):\n    patch(client.scratch)\n"
    )
    after = before.replace("client, scratch, patch", "client, patch", 1)
    assert _sites("python", before, after) == [("client, scratch, patch)", "client, patch)")]  # test_c's


def test_a_parameter_dropped_while_its_function_still_reads_it_is_dropped_where_others_read_it() -> None:
    before = (
        "def test_a(client, strict, patch):\n    patch(client, strict=strict)\n\n\n"
        "def test_b(client, strict, patch):\n    patch(strict)\n"
    )
    after = before.replace("client, strict, patch", "client, patch", 1)
    assert _sites("python", before, after) == [("client, strict, patch)", "client, patch)")]  # reads next


def test_parameters_given_types_are_typed_where_a_function_takes_them_alike() -> None:
    before = (
        "class C:\n    def run(self, command, **kwargs):\n        pass\n\n"
        "    def _run(self, runner, command, **kwargs):\n        pass\n\n"
        "    def other(self, command, options):\n        pass\n"
    )
    after = before.replace("run(self, command, **kwargs)", "run(self, command: str, **kwargs: Any)", 1)
    assert _sites("python", before, after) == [("command, **kwargs", "command: str, **kwargs: Any")]


def test_one_parameter_given_a_type_is_typed_where_it_stands_plain() -> None:
    before = "def f(path):\n    pass\n\n\ndef g(path, x):\n    f(path)\n\n\ndef h(x, path=None):\n    pass\n"
    after = before.replace("def f(path)", "def f(path: str)", 1)
    assert _sites("python", before, after) == [("path", "path: str")]
