"""Retrievers, fusion and the budget, on a small real workspace."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from indexer.positions import cursor_offset
from indexer.retrieval.base import RetrievalContext, RetrievalQuery, Snippet
from indexer.retrieval.bm25 import Bm25Retriever
from indexer.retrieval.definitions import DefinitionsRetriever
from indexer.retrieval.fusion import pack_into_budget, reciprocal_rank_fusion
from indexer.retrieval.imports import imported_paths, path_matches_stem
from indexer.retrieval.recent import RecentWindowsRetriever
from indexer.token_estimate import TokenEstimate
from indexer.workspace import WorkspaceIndex

FILES = {
    "shop/pricing.py": (
        "def apply_discount(price, percent):\n"
        '    """Price after a percentage discount."""\n'
        "    return price * (100 - percent) / 100\n"
    ),
    "legacy/pricing_old.py": "def apply_discount(price):\n    return price\n",
    "shop/cart.py": (
        "from shop.pricing import apply_discount\n"
        "\n"
        "\n"
        "def checkout(items, percent):\n"
        "    subtotal = sum(item.price for item in items)\n"
        "    return apply_discount(subtotal, percent)\n"
    ),
    "shop/inventory.py": (
        "class Inventory:\n"
        "    def restock_warehouse_shelves(self, shelves):\n"
        "        for shelf in shelves:\n"
        "            shelf.refill_warehouse_stock()\n"
    ),
}


@pytest.fixture
def index(tmp_path: Path, write_files: Callable) -> Iterator[WorkspaceIndex]:
    root = tmp_path / "ws"
    write_files(root, FILES)
    workspace = WorkspaceIndex(root, db_path=tmp_path / "index.sqlite")
    workspace.refresh()
    yield workspace
    workspace.close()


def query_after(text: str, path: str, marker: str) -> RetrievalQuery:
    """A query with the cursor just after the first ``marker`` in ``text``."""
    offset = text.index(marker) + len(marker)
    line = text.count("\n", 0, offset)
    column = offset - (text.rfind("\n", 0, offset) + 1)
    return RetrievalQuery(path, text, line, column, own_lines_before=3, own_lines_after=1)


def context_for(index: WorkspaceIndex, query: RetrievalQuery, **extra: object) -> RetrievalContext:
    offset = cursor_offset(query.text, query.line, query.column)
    return RetrievalContext(index.store, query, offset, deadline=float("inf"), **extra)  # type: ignore[arg-type]


def test_definitions_resolve_through_imports(index: WorkspaceIndex) -> None:
    query = query_after(FILES["shop/cart.py"], "shop/cart.py", "return apply_discount")
    snippets = DefinitionsRetriever().retrieve(context_for(index, query), 5)
    assert [(s.path, s.start_line, s.end_line) for s in snippets[:2]] == [
        ("shop/pricing.py", 0, 2),
        ("legacy/pricing_old.py", 0, 1),
    ]
    assert snippets[0].text == FILES["shop/pricing.py"]


def test_bm25_finds_chunks_sharing_rare_identifiers(index: WorkspaceIndex) -> None:
    text = "def audit(store):\n    store.refill_warehouse_stock()\n"
    query = query_after(text, "audit.py", "store.refill_warehouse_stock")
    snippets = Bm25Retriever().retrieve(context_for(index, query), 3)
    assert snippets[0].path == "shop/inventory.py" and snippets[0].sources == ("bm25",)


def test_recent_windows_by_jaccard(index: WorkspaceIndex) -> None:
    recent = [
        ("notes/scratch.py", "alpha_total = beta_count + gamma_rate\n"),
        ("other.py", "unrelated = 1\n"),
    ]
    query = query_after("x = alpha_total + beta_count\n", "new.py", "beta_count")
    snippets = RecentWindowsRetriever().retrieve(context_for(index, query, recent_documents=recent), 5)
    assert [(s.path, s.score) for s in snippets] == [("notes/scratch.py", 2 / 3)]


def test_never_the_cursor_own_region(index: WorkspaceIndex) -> None:
    text = FILES["shop/cart.py"]
    query = RetrievalQuery("shop/cart.py", text, 5, 25, own_lines_before=10, own_lines_after=10)
    snippets = index.retrieve(query, token_budget=10_000)
    assert snippets and all(snippet.path != "shop/cart.py" for snippet in snippets)


def test_fusion_scores_and_merges_overlaps() -> None:
    a = Snippet("a.py", 0, 9, "a", ("definitions",), 1.0)
    b = Snippet("b.py", 0, 4, "b", ("definitions",), 0.5)
    a_window = Snippet("a.py", 5, 14, "a2", ("recent",), 0.9)
    b_again = Snippet("b.py", 0, 4, "b", ("bm25",), 7.0)
    fused = reciprocal_rank_fusion([[a, b], [b_again], [a_window]], k=60)
    # b: 1/62 + 1/61 beats a: 1/61, and a's overlapping window folds into a.
    assert [(s.path, s.sources) for s in fused] == [
        ("b.py", ("definitions", "bm25")),
        ("a.py", ("definitions", "recent")),
    ]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert fused[1].score == pytest.approx(1 / 61 + 1 / 61)


def test_packing_respects_the_budget() -> None:
    big = Snippet("big.py", 0, 99, "x" * 400, ("bm25",), 3.0)
    small = Snippet("s.py", 0, 1, "y" * 40, ("bm25",), 2.0)
    other = Snippet("o.py", 0, 1, "z" * 40, ("bm25",), 1.0)
    assert TokenEstimate().tokens(big.text) == 115  # 400 / 3.5, rounded up
    assert TokenEstimate().tokens(small.text) == 12
    assert pack_into_budget([big, small, other], 15) == [small]
    assert pack_into_budget([big, small, other], 127) == [big, small]
    assert pack_into_budget([big, small, other], 139) == [big, small, other]
    # calibrated from a model with 4 characters a token, the same snippets cost less
    four = TokenEstimate.measured(4.0)
    assert four.tokens(big.text) == 100
    assert pack_into_budget([big, small, other], 120, four) == [big, small, other]


def test_an_unmeasured_rate_falls_back_to_the_default() -> None:
    assert TokenEstimate.measured(0.0) == TokenEstimate()
    assert TokenEstimate.measured(float("nan")) == TokenEstimate()
    assert TokenEstimate.measured(-2.0) == TokenEstimate()
    assert TokenEstimate.measured(2.5).tokens_of_chars(10) == 4


def test_cancelled_retrieval_returns_nothing(index: WorkspaceIndex) -> None:
    cancel = threading.Event()
    cancel.set()
    query = query_after(FILES["shop/cart.py"], "shop/cart.py", "return apply_discount")
    assert index.retrieve(query, cancel=cancel) == []


def test_buffer_edits_are_retrievable(index: WorkspaceIndex) -> None:
    index.update_buffer("shop/tax.py", "def add_sales_tax(amount):\n    return amount * 1.2\n")
    text = "def bill(amount):\n    return add_sales_tax"
    query = RetrievalQuery("bill.py", text, 1, len("    return add_sales_tax"), 0, 0)
    snippets = index.retrieve(query)
    assert snippets[0].path == "shop/tax.py" and "definitions" in snippets[0].sources


def test_import_resolution_rules() -> None:
    python = (
        "from .models import User as U, Group\nimport pkg.sub as ps, json  # comment\nfrom . import views\n"
        "if TYPE_CHECKING:\n    from .forms import (\n        Form,\n        Field as F,\n    )\n"
    )
    assert imported_paths(python, "app/main.py") == {
        "U": ["app/models", "app/models/__init__", "app/models/User"],
        "Group": ["app/models", "app/models/__init__", "app/models/Group"],
        "views": ["app", "app/__init__", "app/views"],
        "ps": ["pkg/sub", "pkg/sub/__init__"],
        "json": ["json", "json/__init__"],
        "Form": ["app/forms", "app/forms/__init__", "app/forms/Form"],
        "F": ["app/forms", "app/forms/__init__", "app/forms/Field"],
    }
    script = "import { render, h as hyper } from '../ui/dom.js';\nimport lodash from 'lodash';\n"
    assert imported_paths(script, "src/app/main.ts") == {
        "render": ["src/ui/dom", "src/ui/dom/index"],
        "hyper": ["src/ui/dom", "src/ui/dom/index"],
    }


def test_module_qualified_call_finds_the_imported_module_among_many(
    tmp_path: Path, write_files: Callable
) -> None:
    # `match` is a keyword somewhere and has more definitions than the per-name cap; the import decides.
    files = {f"noise/n{i}.py": "def match(x):\n    return x\n" for i in range(50)}
    files["regex/__init__.py"] = "def match(pattern, text):\n    return pattern == text\n"
    text = "import regex\n\n\ndef check(line):\n    return regex.match"
    files["app.py"] = text
    write_files(tmp_path / "ws", files)
    with WorkspaceIndex(tmp_path / "ws", db_path=tmp_path / "i.sqlite") as index:
        index.refresh()
        query = RetrievalQuery("app.py", text, 4, len("    return regex.match"), 0, 0)
        snippets = DefinitionsRetriever().retrieve(context_for(index, query), 3)
        assert snippets[0].path == "regex/__init__.py"
        unresolved = DefinitionsRetriever(resolve_imports=False).retrieve(context_for(index, query), 3)
        assert all(snippet.path.startswith("noise/") for snippet in unresolved)


def test_spent_time_budget_returns_nothing(index: WorkspaceIndex) -> None:
    query = query_after(FILES["shop/cart.py"], "shop/cart.py", "return apply_discount")
    assert index.retrieve(query, time_budget_ms=0) == []
    assert index.retrieve(query, time_budget_ms=5_000) != []


def test_definitions_in_the_same_language_family_come_first(tmp_path: Path, write_files: Callable) -> None:
    write_files(
        tmp_path / "ws",
        {
            "a/total.c": "int combine(int a, int b) {\n  return a + b;\n}\n",
            "b/total.ts": "export function combine(a: number, b: number) {\n  return a + b;\n}\n",
        },
    )
    with WorkspaceIndex(tmp_path / "ws", db_path=tmp_path / "i.sqlite") as index:
        index.refresh()
        text = "const sum = combine"
        query = RetrievalQuery("c/main.js", text, 0, len(text), 0, 0)
        snippets = DefinitionsRetriever().retrieve(context_for(index, query), 2)
        # Both are top-level functions of the same name; only the language tells them apart.
        assert [snippet.path for snippet in snippets] == ["b/total.ts", "a/total.c"]


def test_import_resolution_in_go_rust_java() -> None:
    go = 'package main\nimport (\n\t"fmt"\n\tu "example.com/proj/internal/util"\n\t_ "embed"\n)\n'
    assert imported_paths(go, "cmd/main.go") == {"fmt": ["fmt/"], "u": ["util/"]}
    assert path_matches_stem("internal/util/sum.go", "util/")
    assert not path_matches_stem("internal/util/deeper/sum.go", "util/")
    rust = "use crate::geo::shapes::{Circle, area as a};\nuse super::util;\n"
    assert imported_paths(rust, "src/app.rs") == {
        "Circle": ["geo/shapes", "geo/shapes/mod", "geo/shapes/Circle"],
        "a": ["geo/shapes", "geo/shapes/mod", "geo/shapes/area"],
        "util": ["lib", "main", "util"],
    }
    java = "import com.acme.geo.Circle;\nimport static com.acme.math.Ops.square;\nimport java.util.*;\n"
    assert imported_paths(java, "A.java") == {
        "Circle": ["com/acme/geo/Circle"],
        "square": ["com/acme/math/Ops"],
    }
    script = "import './side.css';\nimport * as ns from '../y.js';\n"
    assert imported_paths(script, "src/m.ts") == {"ns": ["y", "y/index"]}


def test_go_package_qualified_call_resolves_to_the_imported_folder(
    tmp_path: Path, write_files: Callable
) -> None:
    files = {
        f"{folder}/sum.go": f"package {folder}\n\nfunc Sum(a, b int) int {{\n\treturn a + b\n}}\n"
        for folder in "abc"
    }
    files["z/internal/util/sum.go"] = "package util\n\nfunc Sum(a, b int) int {\n\treturn b + a\n}\n"
    text = 'package main\n\nimport u "example.com/z/internal/util"\n\nfunc main() {\n\tu.Sum'
    files["cmd/main.go"] = text
    write_files(tmp_path / "ws", files)
    with WorkspaceIndex(tmp_path / "ws", db_path=tmp_path / "i.sqlite") as index:
        index.refresh()
        query = RetrievalQuery("cmd/main.go", text, 5, len("\tu.Sum"), 0, 0)
        resolved = DefinitionsRetriever().retrieve(context_for(index, query), 4)
        assert resolved[0].path == "z/internal/util/sum.go"
        unresolved = DefinitionsRetriever(resolve_imports=False).retrieve(context_for(index, query), 4)
        assert unresolved[0].path == "a/sum.go"


def test_recent_windows_reach_the_last_lines(index: WorkspaceIndex) -> None:
    document = "\n".join(
        [f"filler_{n} = {n}" for n in range(31)] + ["rare_alpha = rare_beta + rare_gamma"] * 4
    )
    query = query_after("x = rare_alpha + rare_beta + rare_gamma", "new.py", "rare_gamma")
    context = context_for(index, query, recent_documents=[("doc.py", document)])
    snippets = RecentWindowsRetriever().retrieve(context, 1)
    assert [(s.start_line, s.end_line) for s in snippets] == [(20, 34)]  # the last window ends at the end
    assert snippets[0].text.endswith("rare_alpha = rare_beta + rare_gamma\n")
