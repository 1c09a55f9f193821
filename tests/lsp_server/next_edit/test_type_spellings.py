"""A type annotation's edit that only spells the same type otherwise, told from one that changes
what the type means."""

from __future__ import annotations

import pytest

from lsp_server.next_edit.type_spellings import replaces_own_type, same_type_respelled


@pytest.mark.parametrize(
    ("old", "new", "same"),
    [
        (b"Iterator[bytes]", b"typing.Iterator[bytes]", True),
        (b"typing.Iterator[bytes]", b"Iterator[bytes]", True),
        (b"Union[A, B]", b"A | B", True),
        (b"Optional[Dict[str, int]]", b"dict[str, int] | None", True),
        (b"List[int]", b"list[int]", True),
        (b"Optional[str]", b"str", False),
        (b"Optional[Engine]", b"Union[Engine, Literal[False], None]", False),
        (b"Iterator[bytes]", b"Iterator[str]", False),
        (b"Iterator[bytes]", b"Iterator[bytes]", False),
        (b"Generator[str, None, None]", b"Generator[str]", True),
        (b"Generator[None, None, None]", b"Generator[None]", True),
        (b"Generator[str, None, None]", b"Generator[int]", False),
        (b"Generator[str, int, None]", b"Generator[str]", False),
    ],
)
def test_a_type_respelled_means_the_same_words(old: bytes, new: bytes, same: bool) -> None:
    assert same_type_respelled(old, new) is same


@pytest.mark.parametrize(
    ("old", "new", "own"),
    [
        (b"Callable[[Any, ISortPrettyPrinter], str]", b"Callable[[Any, Config, int], str]", True),
        (b"List[_Token]", b"List[tokenize.TokenInfo]", True),
        (b"Optional[Request]", b"Request", False),  # about the name: made required
        (b"Request", b"Request | None", False),
        (b"AnyStr", b"Union[bytes, str]", False),  # typing's
        (b"Optional[str]", b"str", False),
        (b"dict[str, Any]", b"dict[str, list[Any]]", False),
    ],
)
def test_a_type_of_the_projects_own_replaced_is_about_the_type(old: bytes, new: bytes, own: bool) -> None:
    assert replaces_own_type(old, new) is own
