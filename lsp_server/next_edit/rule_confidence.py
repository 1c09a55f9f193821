"""Whether a learned rule is worth showing at all, before any site is looked for: a rule learned
from one edit whose fixed names and literals are all common tokens (``self``, ``0``, ``None``) or
shorter than three characters, or that has only keywords (``assert a == b`` -> ``assert b == a``),
matches too widely to be a guess worth showing (two examples may, when the replacement writes a word
of its own or leaves one out); nor is a rule whose whole change sets one keyword argument to a
constant (a flag: a choice made per call), nor one of one example that writes several times more
text of its own than it fixes (new code for one place), adds a comment after a line (a note for
that place) or deletes lines of logic (a decision for that place), nor one that writes a statement
beside one it keeps whole, even after two examples. An edit that turns one kind of node into another
is recognised by the keyword it starts with (``print x``), never by an operator alone (``a in b``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lsp_server.next_edit.edit_pattern import Branch, Hole, Leaf, Pattern, fixed_words, is_word, telling_words
from lsp_server.next_edit.edit_rule import EditRule
from lsp_server.next_edit.name_bindings import values_read
from lsp_server.next_edit.rule_parts import assigned_variable

if TYPE_CHECKING:
    import tree_sitter

COMMON_WORDS = frozenset(
    b"self cls this 0 1 2 None True False null nil true false undefined i j k x n err ok".split()
)
"""Tokens too common to recognise a change by, alone."""
OPERATOR_WORDS = frozenset(b"is not in and or".split())
"""Operators spelled as words: what they write is punctuation, not a word of the rule's own."""
_VERSION = re.compile(rb"v?\d+(?:\.\d+){2,}(?:[-.+]?[A-Za-z0-9]+)?")
"""A version number of three parts or more (``1.21.1``, ``v2.0.0rc1``)."""
_FLAG = re.compile(rb"(?:^|[(,])\s*([A-Za-z_]\w*)\s*=\s*(?:True|False|None|[A-Z]\w*\.[A-Z][A-Z0-9_]*)\b")
"""A keyword argument set to a constant: ``True``, ``False``, ``None``, an enumeration's member."""
NEW_CODE_BYTES = 40
NEW_CODE_RATIO = 4
"""A rule of one example writing at least ``NEW_CODE_BYTES`` (spaces left out), over ``NEW_CODE_RATIO``
times what its pattern fixes, writes new code for one place."""


def stays_quiet(rule: EditRule) -> bool:
    """Whether no site of ``rule`` is worth showing, for any of the reasons above (the one check the
    site search makes)."""
    return (
        too_wide(rule)
        or writes_new_code(rule)
        or inserts_unanchored(rule)
        or notes_one_place(rule)
        or deletes_a_block(rule)
    )


def too_wide(rule: EditRule) -> bool:
    """Whether a rule has nothing telling to recognise a site by: no name or literal of three
    characters or more other than a common one, unless the edit turned one kind of node into
    another (``print x`` -> ``print(x)``: the statement's keyword tells its sites). Two examples
    make such a rule worth showing only when its replacement writes a word of its own (``def □():``
    -> ``def □() -> None:``) or leaves one out (the reverse); one that only moves or brackets its
    holes (``assert □ == □`` swapped, ``□ and □`` -> ``(□ and □)``) is a matter of taste applied at
    some of the places of a very common shape, which the code does not tell apart: quiet. A deletion
    is exempt."""
    if _sets_a_flag(rule) or _changes_a_value(rule):
        return True
    if not untold(rule):
        return False
    if annotates_none_returned(rule):
        return False  # told by how a function returns (``rule_agreement.unnamed``)
    if rule.examples == 1 or rule.beside:
        return True  # a statement written beside one kept whole: its place is not told by the kept one
    return rule.deletes is None and not _writes_a_word(rule) and not _drops_a_word(rule)


def untold(rule: EditRule) -> bool:
    """Whether a rule has nothing telling to recognise a site by: no name or literal of three
    characters or more other than a common one, and no keyword its node starts with that the edit
    turned into another kind of node."""
    words = telling_words(rule.before) + ([rule.calls] if rule.calls else [])
    telling = [word for word in words if word not in COMMON_WORDS and len(word.strip()) >= 3]
    return not telling and not (rule.reshapes and _leads_with_keyword(rule))


def _changes_a_value(rule: EditRule) -> bool:
    """Whether a rule of one example replaces one literal given as a value by another literal and
    nothing else (``content_type="text/plain"`` -> ``content_type="image/tiff"``): a value chosen for
    that place, data rather than code, which the same value elsewhere (another record's, another
    test's) does not share: quiet until a second example agrees. A literal replaced by a name or an
    expression is code; a key or an index renamed (``d["colour"]`` -> ``d["color"]``) names what is
    read, and repeats (``node_roles.replaces_a_value``)."""
    return rule.examples == 1 and rule.changes_value and not _bumps_a_version(rule)


def annotates_none_returned(rule: EditRule) -> bool:
    """Whether the rule writes ``-> None`` on a function that returns nothing, ``None`` the one word
    of its own it writes (``symbol_scope.returns_of``)."""
    fixed = set(fixed_words(rule.before))
    written = {word for part in rule.after if isinstance(part, bytes) for word in re.findall(rb"\w+", part)}
    return rule.returns == "nothing" and written - fixed == {b"None"}


def _bumps_a_version(rule: EditRule) -> bool:
    """Whether the literal replaced and its replacement are version numbers of three parts or more
    (``"7.11.2"`` -> ``"7.11.3"``): the project's version, the same wherever it is written (a
    ``version`` and a ``release``), not a value chosen for one place (coverage's history)."""
    old = fixed_words(rule.before)
    new = [part for part in rule.after if isinstance(part, bytes)]
    return len(old) == len(new) == 1 and all(_VERSION.fullmatch(text) for text in (old[0], new[0]))


def writes_new_code(rule: EditRule) -> bool:
    """Whether a rule of one example writes several times more text of its own than its pattern
    fixes (``warn = warning`` made a whole method): new code written for that place, which a second
    place of the old text's shape does not call for; quiet until a second example agrees."""
    if rule.examples > 1 or rule.deletes is not None:
        return False
    written = sum(len(b"".join(part.split())) for part in rule.after if isinstance(part, bytes))
    return written >= NEW_CODE_BYTES and written > NEW_CODE_RATIO * _fixed_bytes(rule.before)


def _fixed_bytes(pattern: Pattern) -> int:
    if isinstance(pattern, Leaf):
        return len(pattern.text)
    if isinstance(pattern, Hole):
        return 0
    return sum(_fixed_bytes(child) for child in pattern.children)


def inserts_unanchored(rule: EditRule) -> bool:
    """Whether a rule of one example only inserts text (an attribute, a call, an argument written
    around or after a node kept whole) where nothing but a variable's name ties a site to the example
    (``{src_file}`` -> ``{src_file.as_posix()}``): a conversion chosen for one use of a value, which
    its other uses do not call for (read in the held-out histories, insertions were the least precise
    kind); quiet until a second example agrees. A callee, a member, a keyword, a definition's or a
    type's name is an anchor the sites share (``obj.size`` -> ``obj.size()``)."""
    return rule.examples == 1 and rule.inserts


def deletes_a_block(rule: EditRule) -> bool:
    """Whether a rule of one example deletes lines of logic, a node over several lines (``if inc is
    NotImplemented: return NotImplemented``): a decision about that place (boltons' history deleted
    2 of 14 such guards), unlike a line of one statement, a decorator or a comment, which repeats;
    quiet until a second example deletes one too."""
    text = rule.before.text.strip() if isinstance(rule.before, Leaf) else b""
    return rule.examples == 1 and rule.deletes == "line" and b"\n" in text


def notes_one_place(rule: EditRule) -> bool:
    """Whether a rule of one example adds a comment after a line (``derived_rules
    .trailing_comment_rule``): a note for that place even where the same code stands elsewhere (a
    ``# type: ignore[unreachable]`` after one of two identical calls, pluggy; a ``# pragma: full
    coverage`` after one of two identical sends, uvicorn); quiet until a second example adds it too
    (tox's ``# noqa: RUF076`` after each autouse fixture)."""
    return rule.examples == 1 and rule.ends_line


def _sets_a_flag(rule: EditRule) -> bool:
    """Whether all the rule writes is one keyword argument set to a constant (``spy(o, "m")`` ->
    ``spy(o, "m", iterators=True)``, ``@hookimpl`` -> ``@hookimpl(wrapper=True)``) or to a member of
    an enumeration (``forward=Forward.ALWAYS``, where nox's next options took ``Forward.NEVER``): a
    choice made per call, which the calls' shapes do not tell (read in the held-out histories, such a
    rule was wrong at most of the calls it matched, even after two examples): quiet."""
    if rule.defines:
        return False  # a parameter's default, not a call's argument
    fixed = set(fixed_words(rule.before))
    written = b" ".join(part for part in rule.after if isinstance(part, bytes))
    new = {word for word in re.findall(rb"\w+", written) if word not in fixed}
    flag = _FLAG.search(written)
    return flag is not None and flag.group(1) in new and new <= set(re.findall(rb"\w+", flag.group(0)))


def _writes_a_word(rule: EditRule) -> bool:
    """Whether the rule's replacement writes a word (a name, a keyword, a literal) its pattern lacks;
    an operator spelled as a word (``is``, ``not``, ``and``) is punctuation: ``□ == □`` -> ``□ is □``
    only swaps an operator."""
    fixed = set(fixed_words(rule.before))
    written = (part for part in rule.after if isinstance(part, bytes))
    return any(
        word not in fixed and word not in OPERATOR_WORDS
        for part in written
        for word in re.findall(rb"\w+", part)
    )


def _drops_a_word(rule: EditRule) -> bool:
    """Whether the rule's replacement leaves out a word its pattern fixes (``def □□ -> None: □`` ->
    ``def □□: □``, two tests' return types dropped, found in the more-itertools history), as a word
    written is a change of its own (``_writes_a_word``); an operator spelled as a word is
    punctuation."""
    written = {word for part in rule.after if isinstance(part, bytes) for word in re.findall(rb"\w+", part)}
    return any(word not in written and word not in OPERATOR_WORDS for word in fixed_words(rule.before))


def _leads_with_keyword(rule: EditRule) -> bool:
    """Whether the rule's node starts with a fixed keyword (``print`` in ``print x``), which tells a
    statement's kind; an operator between holes (``□ in □``) or before one (``not □``: found in the
    humanize history made ``□ == 0`` at every negation) matches every such expression."""
    first = rule.before.children[0] if isinstance(rule.before, Branch) and rule.before.children else None
    return isinstance(first, Leaf) and is_word(first.text) and first.text not in OPERATOR_WORDS


def tied_to_values(rule: EditRule, old: tree_sitter.Node) -> bool:
    """Whether the rule's only names and literals are variables ``old`` reads as values (``src_file``
    in ``{src_file}``) or assigns (``exc_map`` in ``exc_map = {…}``, an entry added to one of the
    file's maps of that name, found in the httpcore history): no callee, member, keyword,
    definition's or type's name to tie a site to."""
    telling = set(telling_words(rule.before))
    assigned = assigned_variable(old)
    return bool(telling) and telling <= values_read(old) | ({assigned} if assigned is not None else set())
