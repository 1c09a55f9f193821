"""The one-line bugs of ``codedraft bench fix``: each a small module, a failing test, and the line.

Every case is the kind of slip a person makes and a check catches at once: off by one, a wrong
operator, a wrong name, a missing ``return``. Each workspace is a module and a ``unittest`` file
(the check is ``python3 -m unittest -q``: the standard library only, so the sandbox needs nothing
installed); ``line`` (from 1) is where the bug is, as a user would point ``codedraft fix FILE:LINE``
at it, and ``fixed`` is the line as it should read (one fix that passes; others may too).
"""

from __future__ import annotations

from dataclasses import dataclass

CHECK = "python3 -m unittest -q"


@dataclass(frozen=True)
class FixCase:
    """One bug: ``files`` of the workspace, the buggy ``line`` (from 1) of ``path``, its kind."""

    name: str
    kind: str
    path: str
    line: int
    files: dict[str, str]
    fixed: str

    def broken_line(self) -> str:
        return self.files[self.path].split("\n")[self.line - 1]


def _case(name: str, kind: str, module: str, asserts: tuple[str, ...], bug: str, fixed: str) -> FixCase:
    stem = name.replace("-", "_")
    test = f"class {stem.title().replace('_', '')}Test(unittest.TestCase):\n    def test_{stem}(self):\n"
    test += "".join(f"        {line}\n" for line in asserts)
    lines = module.split("\n")
    line = next(n for n, text in enumerate(lines, 1) if text.strip() == bug)
    files = {f"{stem}.py": module, f"test_{stem}.py": f"import unittest\n\nfrom {stem} import *\n\n\n{test}"}
    indent = lines[line - 1][: len(lines[line - 1]) - len(lines[line - 1].lstrip())]
    return FixCase(name, kind, f"{stem}.py", line, files, indent + fixed)


CASES: tuple[FixCase, ...] = (
    _case(
        "mean", "off by one",
        "def mean(values):\n    return sum(values) / (len(values) - 1)\n",
        ('self.assertEqual(mean([1, 2, 3]), 2)',),
        "return sum(values) / (len(values) - 1)", "return sum(values) / len(values)",
    ),
    _case(
        "factorial", "off by one",
        "def factorial(n):\n    result = 1\n    for k in range(1, n):\n        result *= k\n"
        "    return result\n",
        ('self.assertEqual(factorial(4), 24)',),
        "for k in range(1, n):", "for k in range(1, n + 1):",
    ),
    _case(
        "second", "off by one",
        "def second(items):\n    return items[2]\n",
        ("self.assertEqual(second(['a', 'b', 'c']), 'b')",),
        "return items[2]", "return items[1]",
    ),
    _case(
        "is-even", "wrong operator",
        "def is_even(n):\n    return n % 2 == 1\n",
        ('self.assertTrue(is_even(4))', 'self.assertFalse(is_even(3))',),
        "return n % 2 == 1", "return n % 2 == 0",
    ),
    _case(
        "area", "wrong operator",
        "def area(width, height):\n    return width + height\n",
        ('self.assertEqual(area(3, 4), 12)',),
        "return width + height", "return width * height",
    ),
    _case(
        "is-adult", "wrong operator",
        "def is_adult(age):\n    return age > 18\n",
        ('self.assertTrue(is_adult(18))', 'self.assertFalse(is_adult(17))',),
        "return age > 18", "return age >= 18",
    ),
    _case(
        "total", "wrong name",
        "def compute(items):\n    return sum(items)\n\n\ndef total(items):\n    value = compute(itemz)\n"
        "    return value\n",
        ('self.assertEqual(total([1, 2]), 3)',),
        "value = compute(itemz)", "value = compute(items)",
    ),
    _case(
        "shout", "wrong name",
        "def shout(text):\n    return text.uper() + '!'\n",
        ("self.assertEqual(shout('hi'), 'HI!')",),
        "return text.uper() + '!'", "return text.upper() + '!'",
    ),
    _case(
        "double", "missing return",
        "def double(x):\n    x * 2\n",
        ('self.assertEqual(double(5), 10)',),
        "x * 2", "return x * 2",
    ),
    _case(
        "first-word", "missing return",
        "def first_word(text):\n    words = text.split()\n    words[0]\n",
        ("self.assertEqual(first_word('hello world'), 'hello')",),
        "words[0]", "return words[0]",
    ),
)  # fmt: skip
