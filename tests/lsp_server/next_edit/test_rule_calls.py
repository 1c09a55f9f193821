"""A parameter added at the end of a function's positional parameters is passed at its calls, where a
variable of its name is bound (found in the tenth held-out set, coverage: ``should_skip(core)`` ->
``should_skip(core, metacov)``); a method's calls on any receiver; no rule for a default, a ``*``, or
another change of the signature."""

from __future__ import annotations

from tests.lsp_server.next_edit.test_edit_rules import _learned, _sites

FUNCTIONS = (
    "def should_skip(core):\n    return core\n\n\n"
    "def main(core, metacov):\n    skip_msg = should_skip(core)\n    return should_skip(core, metacov)\n\n\n"
    "def other(core):\n    return should_skip(core)\n\n\n"
    "def more(a, b, metacov):\n    return should_skip(a, b)\n"
)
METHODS = (
    "class A:\n    def _strip(self, headers):\n        return headers\n\n"
    "    def run(self, headers, status):\n        return self._strip(headers)\n\n"
    "    def go(self, headers):\n        return self._strip(headers)\n"
)


def test_a_parameter_added_is_passed_at_the_calls_where_its_variable_is_bound() -> None:
    after = FUNCTIONS.replace("should_skip(core):", "should_skip(core, metacov):", 1)
    assert _sites("python", FUNCTIONS, after) == [("should_skip(core)", "should_skip(core, metacov)")]


def test_a_parameter_added_to_a_method_is_passed_at_its_calls_on_a_receiver() -> None:
    after = METHODS.replace("_strip(self, headers):", "_strip(self, headers, status):", 1)
    assert _sites("python", METHODS, after) == [("self._strip(headers)", "self._strip(headers, status)")]


def test_a_parameter_with_a_default_or_a_keyword_only_one_passes_nothing() -> None:
    for written in ("should_skip(core, metacov=None):", "should_skip(core, *, metacov):"):
        learned = _learned("python", FUNCTIONS, FUNCTIONS.replace("should_skip(core):", written, 1))
        assert learned is not None and learned.rule.then is None


def test_a_parameter_added_to_a_static_method_is_passed_after_all_its_arguments() -> None:
    before = (
        "class A:\n    @staticmethod\n    def strip(headers):\n        return headers\n\n"
        "    def run(self, headers, status):\n        return A.strip(headers)\n"
    )
    after = before.replace("strip(headers):", "strip(headers, status):", 1)
    assert _sites("python", before, after) == [("A.strip(headers)", "A.strip(headers, status)")]
