"""A run of text respelled inside a string or a comment is respelled where the same run stands in the
file's other strings (comments): not as a part of a longer run, not where it is a whole literal (a
value), not in a comment for a string's change, and not for a run too short to tell a place."""

from __future__ import annotations

from tests.lsp_server.next_edit.test_edit_rules import _learned, _sites

MESSAGES = (
    'def f():\n    raise Error("Can\'t connect to the server")\n\n\n'
    'def g():\n    log("Can\'t reach it")  # Can\'t say\n    x = "Can\'tever"\n    y = "Can\'t"\n'
)


def test_a_word_respelled_in_a_message_is_respelled_in_the_other_messages_only() -> None:
    after = MESSAGES.replace("Can't connect", "Cannot connect", 1)
    assert _sites("python", MESSAGES, after) == [("Can't", "Cannot")]


def test_a_run_respelled_inside_a_repr_is_respelled_in_other_strings_but_not_where_it_is_the_value() -> None:
    before = "a = \"URL(host='local.host', path='/')\"\nb = \"URL(host='local.host')\"\nc = 'local.host'\n"
    after = before.replace("local.host", "www.domain.tld", 1)
    assert _sites("python", before, after) == [("local.host", "www.domain.tld")]


def test_a_comment_rewritten_whole_is_rewritten_where_the_same_comment_stands() -> None:
    before = "import a  # noqa: SLF001\nimport b  # noqa: SLF001\nimport c  # noqa: E501\n"
    after = before.replace("noqa: SLF001", "ruff: ignore[private-member-access]", 1)
    assert _sites("python", before, after) == [("noqa: SLF001", "ruff: ignore[private-member-access]")]


def test_a_path_in_a_comment_is_respelled_as_a_whole_run() -> None:
    before = '#  File "/private/var/T/t0/bug.py", line 11\n#  File "/private/var/T/t0/bug.py", line 6\n'
    after = before.replace("/private/var/T/", "/tmp/", 1)
    assert _sites("python", before, after) == [("/private/var/T/t0/bug.py", "/tmp/t0/bug.py")]


def test_a_short_or_numeric_run_and_a_whole_literal_make_no_respelling() -> None:
    numbers = 'a = "version 1.5.2 here"\nb = "version 1.5.2 there"\n'
    learned = _learned("python", numbers, numbers.replace("1.5", "2.0", 1))
    assert learned is not None and learned.rule.respelled is None
    values = 'a = "text/plain"\nb = "text/plain"\n'
    learned = _learned("python", values, values.replace("text/plain", "image/tiff", 1))
    assert learned is None or learned.rule.respelled is None


def test_a_run_respelled_in_a_comment_is_respelled_in_the_same_function_where_the_rule_spans_it() -> None:
    before = (
        "def test_it() -> None:\n    # at /private/var/T/bug.py, line 11\n    check()\n"
        "    # at /private/var/T/bug.py, line 6\n    check()\n"
    )
    after = before.replace("/private/var/T/", "/tmp/", 1)
    assert _sites("python", before, after) == [("/private/var/T/bug.py", "/tmp/bug.py")]


def test_a_line_inserted_in_a_docstring_respells_nothing() -> None:
    before = 'X = """\nLanguage :: 3.14\nLanguage :: Implementation :: CPython\n"""\nY = "Implementation 1"\n'
    after = before.replace("Language :: Implementation", "Language :: 3.15\nLanguage :: Implementation", 1)
    learned = _learned("python", before, after)
    assert learned is None or learned.rule.respelled is None


def test_a_run_is_respelled_only_between_bytes_like_the_examples() -> None:
    before = 'A = """\n    glom([None], spec)\n"""\nB = """\n    target: [None]\n    glom([None], f)\n"""\n'
    after = before.replace("glom([None]", "glom(target", 1)
    assert _sites("python", before, after) == [("[None]", "target")]  # in B's glom(...) only


def test_a_plain_word_a_deletion_or_punctuation_added_respells_nothing() -> None:
    before = 'A = "The response is read."\nB = "The response, if any, be either one."\n'
    for old, new in (("response is", "request is"), ("be either", "either"), ("is read.", "is read..")):
        learned = _learned("python", before, before.replace(old, new, 1))
        assert learned is None or learned.rule.respelled is None, (old, new)


def test_the_same_text_laid_out_otherwise_makes_no_respelling() -> None:
    before = 'h = ("one step for load. "\n     "slow tests. ")\nk = "load-balance tests.  shortcut"\n'
    after = before.replace('load. "', 'load.\\n"', 1)
    learned = _learned("python", before, after)
    assert learned is None or learned.rule.respelled is None
