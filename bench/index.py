"""``codedraft bench index``: index speed, retrieval latency and retrieval quality on the Python stdlib.

The standard library directory is copied to a temporary folder first (so one file can be changed),
then indexed from scratch, re-indexed with nothing changed, and re-indexed after one file changes.
The quality evaluation takes call sites of functions defined in another file, as the caller's import
statements pin them down (``from m import f`` then ``f(``, or ``import m`` then ``m.f(``; the
evaluation resolves them with its own reading of the imports), puts the cursor just after the call's
name, and counts how often the defining chunk is among the first five snippets of
each retriever alone and of the fused list. The "recent" retriever sees the query file's folder
neighbours (up to 8 files) as the recently edited documents, as open editor tabs would be.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import shutil
import statistics
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.process_memory import ProcessTreeMemory
from indexer.positions import cursor_offset
from indexer.records import unpack_tags
from indexer.retrieval.base import RetrievalContext, RetrievalQuery, Snippet
from indexer.retrieval.definitions import DefinitionsRetriever
from indexer.skipping import ALWAYS_EXCLUDED_DIRECTORIES
from indexer.workspace import WorkspaceIndex


@dataclass(frozen=True)
class EvalCase:
    """A call site and where its callee is defined."""

    path: str
    line: int
    column: int
    definition_path: str
    definition_line: int


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="codedraft bench index", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--source",
        type=Path,
        default=Path(sysconfig.get_paths()["stdlib"]),
        help="the codebase to index (default: this Python's standard library)",
    )
    parser.add_argument("--cases", type=int, default=300, help="call sites in the quality evaluation")
    parser.add_argument("--seed", type=int, default=0, help="seed for sampling call sites")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="codedraft-bench-index-") as scratch:
        root = Path(scratch) / "workspace"
        print(f"copying {args.source} ...", flush=True)
        shutil.copytree(args.source, root, ignore=shutil.ignore_patterns(*ALWAYS_EXCLUDED_DIRECTORIES))
        with WorkspaceIndex(root, db_path=Path(scratch) / "index.sqlite") as index:
            _bench_indexing(index, root)
            cases = _eval_cases(index, root, args.cases, args.seed)
            _bench_retrieval(index, root, cases)
    return 0


def _cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _bench_indexing(index: WorkspaceIndex, root: Path) -> None:
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cpu_before = _cpu_seconds(resource.RUSAGE_SELF), _cpu_seconds(resource.RUSAGE_CHILDREN)
    load_before = os.getloadavg()[0]
    with ProcessTreeMemory() as together:
        full = index.refresh()
    cpu_parent = _cpu_seconds(resource.RUSAGE_SELF) - cpu_before[0]
    cpu_workers = _cpu_seconds(resource.RUSAGE_CHILDREN) - cpu_before[1]
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rss_workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    counts = index.store.counts()
    size_mb = index.store.db_path.stat().st_size / 1e6
    rate = full.indexed / full.seconds
    print(
        f"full index: {full.indexed} files in {full.seconds:.2f} s = {rate:.0f} files/s; "
        f"{counts['symbols']} symbols, {counts['chunks']} chunks, db {size_mb:.0f} MB; "
        f"peak RSS {rss_after:.0f} MB (before: {rss_before:.0f} MB); "
        f"{index.workers} parse workers, the largest {rss_workers:.0f} MB"
    )
    # On a shared machine wall time depends on what else runs: CPU seconds and the load say how much.
    print(
        f"  CPU: {cpu_parent:.1f} s in this process, {cpu_workers:.1f} s in parse workers; "
        f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores"
    )
    print(
        f"  resident together (this process and its workers, sampled): peak RSS {together.rss_mb:.0f} MB, "
        f"peak PSS {together.pss_mb:.0f} MB, {together.processes} processes"
    )
    print(f"  skipped: {full.skipped_by_reason()}")
    again = index.refresh()
    print(f"no-change re-run: {again.seconds:.3f} s ({again.unchanged} unchanged, {again.indexed} parsed)")
    target = _file_to_change(index, root)
    target.write_text(target.read_text() + "\n\ndef bench_added(value):\n    return value\n")
    started = time.perf_counter()
    one = index.refresh_files([target])
    one_ms = (time.perf_counter() - started) * 1000
    rerun = index.refresh()
    print(
        f"one changed file: {one_ms:.1f} ms through refresh_files ({one.updated} updated); "
        f"whole-workspace refresh after it: {rerun.seconds:.3f} s"
    )


def _file_to_change(index: WorkspaceIndex, root: Path) -> Path:
    """The standard library's ``json/decoder.py``, or the first indexed Python file of another codebase."""
    target = root / "json" / "decoder.py"
    if target.is_file():
        return target
    rows = index.store.query("SELECT path FROM files WHERE language='python' ORDER BY path LIMIT 1")
    return root / rows[0][0]


_FROM_IMPORT = re.compile(r"^from ([A-Za-z_][\w.]*) import ([\w, ]+)$", re.MULTILINE)
_MODULE_IMPORT = re.compile(r"^import ([A-Za-z_][\w.]*)(?: as (\w+))?$", re.MULTILINE)


def _module_files(module: str, files: set[str]) -> list[str]:
    stem = module.replace(".", "/")
    return [path for path in (f"{stem}.py", f"{stem}/__init__.py") if path in files]


def _eval_cases(index: WorkspaceIndex, root: Path, count: int, seed: int) -> list[EvalCase]:
    """Call sites whose callee the import statements pin down: ``from m import f`` then ``f(``, or
    ``import m`` then ``m.f(``, where ``f`` is a top-level function of another file of the codebase."""
    functions: dict[tuple[str, str], int] = {
        (path, name): line
        for name, path, line in index.store.query(
            "SELECT s.name, f.path, s.line FROM symbols s JOIN files f ON f.id = s.file_id"
            " WHERE s.kind = 'function' AND s.scope = '' AND f.language = 'python'"
        )
    }
    files = {path for (path, _) in functions} | {
        path for (path,) in index.store.query("SELECT path FROM files WHERE language='python'")
    }
    cases: list[EvalCase] = []
    for path, blob in index.store.query("SELECT path, references_blob FROM files WHERE language='python'"):
        text = (root / path).read_text(encoding="utf-8", errors="replace")
        imported_from: dict[str, list[str]] = {}
        for module, names in _FROM_IMPORT.findall(text):
            for name in names.replace(" ", "").split(","):
                imported_from[name] = _module_files(module, files)
        modules = {
            alias or module: _module_files(module, files) for module, alias in _MODULE_IMPORT.findall(text)
        }
        lines = text.split("\n")
        for tag in unpack_tags(blob):
            line = lines[tag.line] if tag.kind == "call" and tag.line < len(lines) else ""
            if not line.isascii() or line[tag.column : tag.column + len(tag.name)] != tag.name:
                continue
            before = line[: tag.column]
            if before.endswith("."):
                qualifier = re.search(r"([\w.]+)\.$", before)
                targets = modules.get(qualifier.group(1), []) if qualifier else []
            else:
                targets = imported_from.get(tag.name, [])
            for target in targets:
                definition_line = functions.get((target, tag.name))
                if target != path and definition_line is not None:
                    cases.append(
                        EvalCase(path, tag.line, tag.column + len(tag.name), target, definition_line)
                    )
    random.Random(seed).shuffle(cases)
    sampled = min(count, len(cases))
    print(f"quality eval: {len(cases)} cross-file call sites resolved by imports, sampling {sampled}")
    return cases[:count]


def _hit(snippets: list[Snippet], case: EvalCase) -> bool:
    return any(
        snippet.path == case.definition_path
        and snippet.start_line <= case.definition_line <= snippet.end_line
        for snippet in snippets[:5]
    )


def _bench_retrieval(index: WorkspaceIndex, root: Path, cases: list[EvalCase]) -> None:
    texts: dict[str, str] = {}
    retrievers = [*index.retrievers, DefinitionsRetriever(resolve_imports=False)]
    names = [retriever.name for retriever in index.retrievers] + ["definitions without imports"]
    hits = dict.fromkeys(names, 0) | {"fused": 0}
    latencies: list[float] = []
    cpu_latencies: list[float] = []
    for case in cases:
        if case.path not in texts:
            texts[case.path] = (root / case.path).read_text(encoding="utf-8", errors="replace")
        text = texts[case.path]
        query = RetrievalQuery(case.path, text, case.line, case.column)
        folder = Path(case.path).parent
        neighbours = sorted(p for p in (root / folder).glob("*.py") if p.name != Path(case.path).name)[:8]
        recent = [
            (p.relative_to(root).as_posix(), p.read_text(encoding="utf-8", errors="replace"))
            for p in neighbours
        ]
        # The fused call runs first, so the single retrievers' runs cannot warm its caches.
        index.set_recent_documents(recent)
        started, started_cpu = time.perf_counter(), time.process_time()
        fused = index.retrieve(query, token_budget=100_000, time_budget_ms=10_000)
        latencies.append((time.perf_counter() - started) * 1000)
        cpu_latencies.append((time.process_time() - started_cpu) * 1000)
        hits["fused"] += _hit(fused, case)
        offset = cursor_offset(text, case.line, case.column)
        for name, retriever in zip(names, retrievers, strict=True):
            context = RetrievalContext(index.store, query, offset, recent, deadline=float("inf"))
            hits[name] += _hit(retriever.retrieve(context, 5), case)
    for label, values in (("wall", latencies), ("CPU", cpu_latencies)):
        values.sort()
        p50 = statistics.median(values)
        p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
        print(
            f"retrieval latency, {label} (fused, {len(values)} queries): p50 {p50:.1f} ms, p95 {p95:.1f} ms, "
            f"max {values[-1]:.1f} ms"
        )
    for name, count in hits.items():
        print(f"recall@5 {name:>27}: {count / max(len(cases), 1):.3f} ({count}/{len(cases)})")
