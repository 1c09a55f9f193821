"""Parsing in worker processes gives what parsing in-process gives, in order (invalid UTF-8 included)."""

from __future__ import annotations

from indexer.parse_pool import analyze_in_order


def test_workers_match_in_process_parsing_in_order() -> None:
    jobs = [(n, f"m{n}.py", f"def f{n}(x):\n    return g(x) + {n}\n".encode()) for n in range(12)]
    jobs.append((99, "bad.py", "x = '\udcff'".encode("utf-8", "surrogatepass")))
    in_process = list(analyze_in_order(iter(jobs), workers=1))
    in_workers = list(analyze_in_order(iter(jobs), workers=2))
    assert [key for key, _ in in_workers] == [*range(12), 99]
    assert in_workers == in_process
    assert [tag.name for tag in in_workers[3][1].tags] == ["f3", "g"]  # type: ignore[union-attr]
