"""A rewrite rule learned from the user's edits (``edit_rules.py``), and where its example lies: the
one type the learning, the matching (``rule_sites.py``) and the service share."""

from __future__ import annotations

from dataclasses import dataclass

from lsp_server.next_edit.comment_edits import LineShape
from lsp_server.next_edit.edit_pattern import Pattern, Template, fixed_words
from lsp_server.next_edit.member_bindings import MemberHome
from lsp_server.next_edit.string_quotes import Requoting
from lsp_server.next_edit.text_respellings import Respelling


@dataclass(frozen=True)
class EditRule:
    """Replace a node matching ``before`` by ``after`` rendered with its holes.

    ``callee``: the sites must lie in the arguments of a call of that name, as the example did.
    ``calls``: the site is itself a call of that name (``await`` rules, whose pattern is one hole).
    ``annotates``: the example lay in the type annotation of this (kind, name) (a parameter, a
    variable or a field, a function's return): the sites must lie in an annotation of the same.
    ``defines``: per example whose node was a whole function definition, the kind of scope the
    function is defined in (``symbol_scope.definition_scope``: a method, a nested function, a
    module's function); where they are of one kind, so is a site's (a parameter added to a method is
    not added to a nested function of the same name). A run of parameters (``sibling_runs.py``) is
    told by its neighbours instead.
    ``role``: the example node's field in its parent, when it was the called function or the receiver
    (a site elsewhere is another shape: ``obj.size`` in ``obj.size()`` is no attribute read); any
    role for a receiver replaced under a kept member (``receiver_edits.ANY_ROLE``).
    ``reshapes``: the example's node became another kind of node (``print x`` -> ``print(x)``).
    ``deletes``: the rule deletes its node: "line" with the line it stands alone on (a decorator),
    "inline" with the spaces before it (a trailing comment); ``after`` is then empty.
    ``trails``: a deleted trailing comment is deleted only after a line of code that begins with this
    shape (None: any).
    ``ends_line``: the rule writes a comment after its node, which ends a line at a site too (nothing
    but spaces after it: no comment of its own, no more code).
    ``indent``: the indentation of the example's line; a line break the replacement writes is indented
    as much more or less at a site as the site's line is.
    ``breaks``: the line breaks of the example's text outside its holes; a site laid out otherwise is
    not rewritten in the example's layout (None: not checked).
    ``run``: ``before`` is a list whose children are a run of another list's children, not all of them
    (``sibling_runs.py``).
    ``beside``: the example wrote a statement beside its node, kept whole in the same block: the
    node's shape does not tell where the new statement goes (``edit_rules.py``).
    ``wrapped_in``: the edit kept the example's node whole inside a new one (``x`` -> ``convert(x)``):
    the kinds of node the examples' nodes stood in (an assignment, a ``return``); a site stands in one
    of them (a value converted where it is returned or assigned is not where it is compared).
    ``quotes``: per hole the replacement writes into a string's interpolation (an f-string's), that
    string's quote characters: a site whose text for the hole holds one would end the string early.
    ``bare``: holes the pattern held alone in brackets that the replacement writes out of them
    (``rule_parts.unbracketed_holes``): a site's text for one holds no line break.
    ``changes_value``: the example replaced a literal given as a value (a keyword argument's, a
    dictionary entry's, an assignment's; not a key or an index) by another literal: data chosen for
    that place (``node_roles.replaces_a_value``).
    ``reads``: names the replacement reads that the pattern did not, each bound where the example
    was (a local, a parameter, an import): a site where one is not bound is left alone
    (``name_bindings.py``).
    ``home``: the replacement read a name nothing bound yet where the example was, which lay in the
    function of this name: the user is about to bind it there, so the sites lie in a function of
    that name (None: anywhere).
    ``inserts``: the example's edit only inserted text (it replaced nothing), and the rule's only
    names are variables read as values (``{src_file}`` -> ``{src_file.as_posix()}``): nothing but a
    variable ties a site to the example (``rule_confidence.inserts_unanchored``).
    ``drops_read``: the example dropped a parameter its function's body still reads (the reads are
    edited next): a site's function may read the parameters the rule drops (``sibling_runs.py``).
    ``uses``: the example's node was a definition kept whole inside a new one (a decorator written
    on it): the names its body reads from outside it (an import, a module's function, class or
    constant; no builtin, parameter or local), after two examples those both read; a site's
    definition reads one of them (a decorator that skips the tests using ``sh`` goes on those tests,
    not on every test of the file). Empty: not checked.
    ``members``: methods the replacement calls on ``self`` of its own, and the example's class: a site
    lies where ``self`` has them (``member_bindings.py``).
    ``primary``: the example's node became an expression a member can follow as it is (a call, a
    member, a subscript; ``node_roles.PRIMARY``): a value's rule applies where its node is a receiver
    too (``v[len(p):]`` -> ``v.removeprefix(p)`` in ``v[len(p):].split('.')``).
    ``returns``: the rule writes a function's return type, and the examples' functions give their
    result this way (``symbol_scope.returns_of``: a value, nothing, by ``yield``): so does a site's
    (``-> Result`` is not written on a generator). None: not checked.
    ``respelled``: the example changed a run of text inside a string or a comment
    (``text_respellings.py``): where the node's shape has no site, the same run in the file's other
    strings (comments) is respelled alike (``before`` is that run alone when the edit made no other
    rule).
    ``requoted``: the example changed a string's quotes alone (``string_quotes.py``): after two
    examples, every string of the file in the old quotes is a site.
    ``then``: a rule for the other places the example's edit calls for, whose sites are offered where
    this rule has none (the calls of a function given a parameter: ``derived_rules
    .calls_given_parameter``).
    ``also``: rules whose sites are this rule's too, once a second example agrees (the other names an
    import brings, qualified alike: ``qualified_names.py``).
    ``examples``: edits that agree on this rule (two raise confidence).
    ``result``: the shape of the example's node after the edit, the kept parts holes: a site of that
    shape was rewritten already (``sorted(list(z))`` for ``sorted(□)`` -> ``sorted(list(□))``)."""

    before: Pattern
    after: Template
    callee: bytes | None = None
    calls: bytes | None = None
    annotates: tuple[str, bytes] | None = None
    defines: tuple[str, ...] = ()
    role: str | None = None
    reshapes: bool = False
    deletes: str | None = None
    trails: LineShape | None = None
    ends_line: bool = False
    indent: bytes = b""
    run: bool = False
    breaks: int | None = None
    beside: bool = False
    wrapped_in: tuple[str, ...] = ()
    quotes: tuple[tuple[int, bytes], ...] = ()
    bare: tuple[int, ...] = ()
    changes_value: bool = False
    reads: tuple[bytes, ...] = ()
    home: bytes | None = None
    inserts: bool = False
    drops_read: bool = False
    uses: tuple[bytes, ...] = ()
    members: MemberHome | None = None
    primary: bool = False
    returns: str | None = None
    respelled: Respelling | None = None
    requoted: Requoting | None = None
    then: EditRule | None = None
    also: tuple[EditRule, ...] = ()
    examples: int = 1
    result: Pattern | None = None

    @property
    def key(self) -> tuple[object, ...]:
        """What makes two rules the same rule (for a dismissal to stop it)."""
        return (
            self.before,
            self.after,
            self.callee,
            self.calls,
            self.role,
            self.annotates,
            self.deletes,
            self.trails,
            self.run,
            self.requoted,
        )

    def anchors(self) -> list[bytes]:
        """Fixed words a site must contain, most telling (longest) first, words of one length in byte
        order: the first is where sites are searched from, so the order must not follow the set's
        (string hashes differ from process to process)."""
        words = fixed_words(self.before) + ([self.calls] if self.calls else [])
        return sorted(set(words), key=lambda word: (-len(word), word))


@dataclass(frozen=True)
class Learned:
    """A rule and where its example now lies in the edited text (bytes ``start``..``end``)."""

    rule: EditRule
    start: int
    end: int
