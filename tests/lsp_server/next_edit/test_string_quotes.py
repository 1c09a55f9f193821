"""Strings requoted (``string_quotes.py``, found reading the eleventh held-out set: multidict's
benchmark requoted from ``'`` to ``"``): two examples requote every string in the old quotes whose
text allows it; one example only what its node's rule tells."""

from __future__ import annotations

from lsp_server.next_edit.string_quotes import Requoting, requoted_text
from tests.lsp_server.next_edit.test_edit_rules import _agreed_sites, _learned, _sites

SOURCE = (
    "IMPLEMENTATIONS = {\n    'dict': 1,\n    'multidict': 2,\n    'cimultidict': 3,\n}\n"
    "name = f'{prefix}-x'\nraw = r'\\d+'\nsaid = 'say \"hi\"'\nlong = '''doc'''\n"
    "if impl == 'dict':\n    pass\n"
)


def test_two_strings_requoted_requote_every_string_of_the_old_quotes_whose_text_allows_it() -> None:
    once = SOURCE.replace("'dict'", '"dict"', 1)
    twice = once.replace("'multidict'", '"multidict"', 1)
    assert _agreed_sites("python", SOURCE, once, twice) == [
        ("'cimultidict'", '"cimultidict"'),
        ("f'{prefix}-x'", 'f"{prefix}-x"'),  # its prefix kept
        ("'dict'", '"dict"'),
    ]  # not r'\d+' (an escape), 'say "hi"' (the new quote inside), nor '''doc''' (other quotes)


def test_one_string_requoted_is_no_quote_style_yet() -> None:
    once = SOURCE.replace("'dict'", '"dict"', 1)
    learned = _learned("python", SOURCE, once)
    assert learned is not None and learned.rule.requoted == Requoting(b"'", b'"', b"", b"", 0, 0)
    assert _sites("python", SOURCE, once) == []


def test_one_argument_requoted_is_requoted_in_the_same_call() -> None:
    before = "a = text.decode('utf-8')\nb = text.decode('latin-1')\nc = text.encode('ascii')\n"
    once = before.replace("decode('utf-8')", 'decode("utf-8")', 1)
    assert _sites("python", before, once) == [("text.decode('latin-1')", 'text.decode("latin-1")')]


def test_a_string_whose_text_changed_too_is_no_requoting() -> None:
    before = "a = 'dict'\nb = 'list'\n"
    learned = _learned("python", before, before.replace("'dict'", '"dicts"', 1))
    assert learned is None or learned.rule.requoted is None


def test_the_requoted_text_of_a_string() -> None:
    single = Requoting(b"'", b'"', b"", b"", 0, 0)
    assert requoted_text(single, b"b'abc'") == b'b"abc"'
    assert requoted_text(single, b"''") == b'""'
    assert requoted_text(single, b"'it\\'s'") is None
    assert requoted_text(single, b'"abc"') is None
    assert (
        requoted_text(Requoting(b"'''", b'"""', b"", b"", 0, 0), b"'''two\nlines'''") == b'"""two\nlines"""'
    )


def test_javascript_strings_requoted_twice_requote_the_others() -> None:
    before = "const a = 'x';\nconst b = 'y';\nconst c = 'z';\nconst d = `t ${a}`;\n"
    once = before.replace("'x'", '"x"', 1)
    twice = once.replace("'y'", '"y"', 1)
    assert _agreed_sites("javascript", before, once, twice) == [("'z'", '"z"')]


def test_many_strings_requoted_are_bounded() -> None:
    before = "".join(f"v{n} = 'text {n}'\n" for n in range(50_000))
    once = before.replace("'text 0'", '"text 0"', 1)
    twice = once.replace("'text 1'", '"text 1"', 1)
    sites = _agreed_sites("python", before, once, twice)
    assert len(sites) == 50 and sites[0] == (
        "'text 2'",
        '"text 2"',
    )  # ``rule_sites.MAX_SITES``, nearest first
