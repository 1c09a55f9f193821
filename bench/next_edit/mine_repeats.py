"""Mines the cases of ``codedraft bench next-edit --repeats`` (edits by example) from git histories,
once, offline afterwards: ``python -m bench.next_edit.mine_repeats --git-dir NAME=DIR ...``.

The sources are typed Python libraries that this project was not tuned on (pallets' projects are
held out for an independent check): encode/httpx, python-attrs/attrs and Textualize/rich, each at a
pinned head, newest commits first, merges skipped; tiangolo/fastapi, mined once the rules of
``lsp_server/next_edit`` were settled and replayed once; encode/starlette and psf/requests, mined
with the same rules for a second round of fixes (fastapi and starlette read, requests measured only);
sqlalchemy/alembic, mined with them and replayed only after that round's last change (then read,
and one more change made); pytest-dev/pluggy, mined before that change and replayed only after
it; and, for a third round, encode/uvicorn, python-poetry/tomlkit, pytest-dev/pytest-mock and
httpie/cli, mined and measured before that round's changes and after them (read in the fourth
round); and, for the fourth round, encode/httpcore and aio-libs/yarl, mined and measured before
that round's changes and after them (read in the fifth); and, for the fifth round,
python-attrs/cattrs, hynek/structlog and marshmallow-code/marshmallow, mined and measured before
that round's changes and after them; and, for the next untouched check, pypa/packaging,
andialbrecht/sqlparse and mahmoud/boltons, mined with the same rules and limits once the fifth
round's figures were in (read in the seventh round); and, once the seventh round's figures were in,
two more untouched sets with the same rules and limits: arrow-py/arrow, jd/tenacity,
getsentry/responses and mahmoud/glom (measured before the eighth round's changes, then read), and
python-jsonschema/jsonschema, jazzband/pip-tools, benoitc/gunicorn and tqdm/tqdm (measured only after
the eighth round, never read); and, before the ninth round's changes, agronholm/anyio,
jpadilla/pyjwt, Delgan/loguru and theskumar/python-dotenv (the sixth untouched set, measured by the
lead before and after that round, never read, then read in the tenth); and, before the tenth
round's changes, more-itertools/more-itertools, dateutil/dateutil, pyparsing/pyparsing and pypa/pipx
(the seventh untouched set, measured by the lead after that round, read in the eleventh); and
PyCQA/flake8, pypa/build, spulec/freezegun and python-humanize/humanize (the eighth untouched set,
mined before the eleventh round's changes with the same rules and limits, measured by the lead
before that round's changes, then read in it); and
python-trio/trio, tox-dev/tox, PyCQA/isort and pypa/twine (the ninth untouched set, mined during the
eleventh round with the same rules and limits, measured by the lead only after that round's changes,
then read in the twelfth); and pre-commit/pre-commit, wntrblm/nox, pyinvoke/invoke and
nedbat/coveragepy (the tenth untouched set, mined during the twelfth round with the same rules and
limits, measured by the lead only after that round's changes, then read in the thirteenth); and
Pylons/waitress, pypa/virtualenv, aio-libs/multidict and pypa/setuptools_scm (the eleventh untouched
set, mined during the thirteenth round with the same rules and limits, measured by the lead before
and after that round's changes, then read in the fourteenth); and pytest-dev/pytest-xdist,
falconry/falcon, python-babel/babel and Pylons/pyramid (the twelfth untouched set, mined before the
fourteenth round's changes with the same rules and limits, measured by the lead before and after
that round's changes, then read in it); and PyCQA/pyflakes, PyCQA/pycodestyle, jazzband/prettytable
(whose history holds 14 cases) and python-poetry/poetry-core (the thirteenth untouched set, mined
after the fourteenth round's first changes with the same rules and limits, measured by the lead
before and after that round's later changes, never read) (all but ``TUNED_ON``: replayed by name
only).
Rules, applied to each commit's modified (not added, deleted or moved) ``.py`` files of
``MIN_CHARS`` to ``MAX_CHARS`` characters, UTF-8, with "\\n" line ends; a file's change is split
into blocks (runs of changed lines, ``cases.py``):

* repeat: two or more blocks of at most ``MAX_BLOCK_LINES`` lines make the same change: the same
  tokens removed and added (whitespace left out, compared with ``difflib`` over ``\\w+`` runs and
  single other characters), and the file's change is no pure rename (``cases.rename_of``) nor is
  that shared change one identifier replaced by another at every place. The case holds all the
  file's blocks; its group is the largest such set of blocks (the first in the file on a tie), at
  most ``MAX_GROUP`` (:func:`repeated_group` finds it again at replay). Its ``change`` names the kind of
  transformation from the shared tokens: "argument added" (only insertions starting with a
  comma), "inserted", "deleted", "word replaced" (one word token by another), or "rewritten";
* silence: the commit modifies exactly one ``.py`` file, in one block of at most
  ``MAX_BLOCK_LINES`` lines (after it, the right answer is no edit).

Newest first until each repository has its counts; one case per commit, at most ``PER_PATH`` per
file path. Nothing here reads codedraft's rules: the miner knows tokens and lines only.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

from bench.next_edit.cases import Block, Case, blocks_between, lines_of, rename_of, save_cases
from bench.next_edit.mine import _git, _modified_python, _show

REPOSITORIES = {
    "httpx": ("https://github.com/encode/httpx", "ae1b9f66238f75ced3ced5e4485408435de10768"),
    "attrs": ("https://github.com/python-attrs/attrs", "c1dc5dcba16ed827aa6dcad896b41a3afedb4e32"),
    "rich": ("https://github.com/Textualize/rich", "42899d8a0a96b121a514516f4be9db44ff7aeaf3"),
    "fastapi": ("https://github.com/tiangolo/fastapi", "6d9dc39fcb3eb3bcd9c2a693683d68311d1618e0"),
    "starlette": ("https://github.com/encode/starlette", "cb8f84f5284dc301ca7a31eb732b9e140769dd48"),
    "requests": ("https://github.com/psf/requests", "1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e"),
    "alembic": ("https://github.com/sqlalchemy/alembic", "20e58db01cad3432c24734e11b893303cdb687a4"),
    "pluggy": ("https://github.com/pytest-dev/pluggy", "e382e72789f8d791991c489d4322aa04e660b952"),
    "uvicorn": ("https://github.com/encode/uvicorn", "e6c7ce791fc634b6eedee40e0d0207faa8a9aefd"),
    "tomlkit": ("https://github.com/python-poetry/tomlkit", "d8ed1e3cdb024dfc2c6f12b45a0dfd4d4d91f727"),
    "pytest-mock": ("https://github.com/pytest-dev/pytest-mock", "9b666cdeff8bd396510e8f52633915a6d57a5f3c"),
    "httpie": ("https://github.com/httpie/cli", "5b604c37c6c67e18e7c3e9aee6c88a8c22b98345"),
    "httpcore": ("https://github.com/encode/httpcore", "98209758cc14e1a5f966fe1dfdc1064b94055d8c"),
    "yarl": ("https://github.com/aio-libs/yarl", "7009e844cec7959e73741102ceadff49ed914291"),
    "cattrs": ("https://github.com/python-attrs/cattrs", "82b02c07ca535a1ba656b935767d819eac9d383b"),
    "structlog": ("https://github.com/hynek/structlog", "025edaf799c6d6d511ab672d14c2ba8e885c4c36"),
    "marshmallow": (
        "https://github.com/marshmallow-code/marshmallow",
        "341b927f219205704728c05cd61f04d7e9727523",
    ),
    "packaging": ("https://github.com/pypa/packaging", "053c884615f2e83d80705251b447769ec2599653"),
    "sqlparse": ("https://github.com/andialbrecht/sqlparse", "60cdc649726bf1bc4f1b336050560b336da715ec"),
    "boltons": ("https://github.com/mahmoud/boltons", "967864f89791509f9eb36b22b4579d36b72a6df2"),
    "arrow": ("https://github.com/arrow-py/arrow", "b247ad073d4c350270528edb5afff8e7f4f7d9e4"),
    "tenacity": ("https://github.com/jd/tenacity", "c650fb45204635f07910948d5fc59a8c551ffdda"),
    "responses": ("https://github.com/getsentry/responses", "a19add7777d7d0c64eeb364f6cc9de624c33f4f8"),
    "glom": ("https://github.com/mahmoud/glom", "c225e2abeb234be7119911b96b4378cc9d8d6478"),
    "jsonschema": (
        "https://github.com/python-jsonschema/jsonschema",
        "b37f7be6dc7966a1f1a67557976041ffe0826cb3",
    ),
    "pip-tools": ("https://github.com/jazzband/pip-tools", "c58d5d945c0f20e9713e10f5fea2491a5c984f39"),
    "gunicorn": ("https://github.com/benoitc/gunicorn", "65ac1a3a4c0aa00960968c720d6e6bd2ac32f1b9"),
    "tqdm": ("https://github.com/tqdm/tqdm", "f6a30fab726ab8e794a9db88b4392ce207760937"),
    "anyio": ("https://github.com/agronholm/anyio", "660a06d548ca72759e9d89ed722dd1ad5227afe4"),
    "pyjwt": ("https://github.com/jpadilla/pyjwt", "dcc27a9d3182a2349c30b160758785c6ce7a6508"),
    "loguru": ("https://github.com/Delgan/loguru", "2a17be730e111cf874d0bf967c4c5da15b7e4670"),
    "python-dotenv": (
        "https://github.com/theskumar/python-dotenv",
        "bca6644d9aedbe287b792b756b3ae3d650cd0d3a",
    ),
    "more-itertools": (
        "https://github.com/more-itertools/more-itertools",
        "2fe1b2eeb9d75f994113fe3ac76d14b6bcd6fb10",
    ),
    "dateutil": ("https://github.com/dateutil/dateutil", "c981f9c7aa91b83cc9bd33a09ecee9e751b06e8d"),
    "pyparsing": ("https://github.com/pyparsing/pyparsing", "efd56db4e59f36b1673ce0eb0823e3afaa9d1201"),
    "pipx": ("https://github.com/pypa/pipx", "9bb766c055d47b44ea36c342b87ed569e7c442b1"),
    "flake8": ("https://github.com/PyCQA/flake8", "48f2ca8bf7c15a2b8ff8be9463182e1e7c5e0c48"),
    "build": ("https://github.com/pypa/build", "b317437d2b5cddea5c7b45f72d1ae8af915e9815"),
    "freezegun": ("https://github.com/spulec/freezegun", "c9bf52c5aa12ea1b5b8647a136a92504ea071f2f"),
    "humanize": (
        "https://github.com/python-humanize/humanize",
        "c3a124cdeb272d7f63bc0aa66f79c6fbafd2fc6d",
    ),
    "trio": ("https://github.com/python-trio/trio", "60d0c2f84854ec6ef74995663dcdce3296840485"),
    "tox": ("https://github.com/tox-dev/tox", "ccb12fc2e1bb9df0da860be4af175e9b97949fbc"),
    "isort": ("https://github.com/PyCQA/isort", "0cba6f6111a07cc05b167008dda0727ecca907c5"),
    "twine": ("https://github.com/pypa/twine", "f536ac5d0c77a24a997854328e64644f576b4992"),
    "pre-commit": ("https://github.com/pre-commit/pre-commit", "a9bba55a3f74068b53f4bd4d831d7e05e34eae6c"),
    "nox": ("https://github.com/wntrblm/nox", "a976d7ee04ab7a13634adc1016d4755a1348225f"),
    "invoke": ("https://github.com/pyinvoke/invoke", "6a71e680c535ba6520e935c497099fbca011d03c"),
    "coverage": ("https://github.com/nedbat/coveragepy", "210ade2b3bed97c089ba29255c9a342c5b7aee14"),
    "waitress": ("https://github.com/Pylons/waitress", "4a378915f6fef264c6aaf03f059bd992287ba8ba"),
    "virtualenv": ("https://github.com/pypa/virtualenv", "df94b342b732f96859595104bebbcfa74a88616b"),
    "multidict": ("https://github.com/aio-libs/multidict", "41c1b9144b13dcdfa4c18085aedc874cc9d24006"),
    "setuptools-scm": (
        "https://github.com/pypa/setuptools_scm",
        "be34dd11af6a5ef50f837d2c09dc98aaddd0a2dc",
    ),
    "pytest-xdist": (
        "https://github.com/pytest-dev/pytest-xdist",
        "f63b6a25b4eb932385c6ee4651eac5c08fbd3a20",
    ),
    "falcon": ("https://github.com/falconry/falcon", "ce0a35b8fd02747cc72710202886874906b0d47a"),
    "babel": ("https://github.com/python-babel/babel", "6ba6701e790f2f4b482ab5919cdf79f9cfef259b"),
    "pyramid": ("https://github.com/Pylons/pyramid", "5b13e4a61b479be17c1d97ab504154595813a8f8"),
    "pyflakes": ("https://github.com/PyCQA/pyflakes", "59ec4593efd4c69ce00fdb13c40fcf5f3212ab10"),
    "pycodestyle": ("https://github.com/PyCQA/pycodestyle", "d6c38543a95c3adec7958fc659f4081972a3f1d1"),
    "prettytable": ("https://github.com/jazzband/prettytable", "190af197c7b3f1c12e9bb266093610d559229ec3"),
    "poetry-core": (
        "https://github.com/python-poetry/poetry-core",
        "c4d922c3183763f19b790c5123b5f9d4f5fa9eaf",
    ),
}
TUNED_ON = ("httpx", "attrs", "rich")
"""The repositories the rules were first tuned on, replayed when none is named; every other one was
mined after a round of the rules' changes, a check that round was not tuned on, and is replayed only
when named."""
CASES_DIR = Path(__file__).parent
COUNTS = {"repeat": 15, "silence": 8}
MIN_CHARS = 300
MAX_CHARS = 40_000
MAX_BLOCK_LINES = 10
MAX_GROUP = 12
PER_PATH = 2
MAX_COMMITS = 3_000

_TOKEN = re.compile(r"\w+|[^\w\s]")
_WORD = re.compile(r"\w+")


def cases_file(name: str) -> Path:
    """The committed data file of one repository's cases."""
    return CASES_DIR / f"repeat_cases_{name}.json"


def change_of(before: str, block: Block) -> tuple[tuple[str, str, str], ...]:
    """The tokens a block removes and adds, as (tag, removed, added) per differing run."""
    old = _TOKEN.findall("".join(lines_of(before)[block.start : block.end]))
    new = _TOKEN.findall("".join(block.lines))
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return tuple(
        (tag, " ".join(old[i1:i2]), " ".join(new[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    )


def kind_of(change: tuple[tuple[str, str, str], ...]) -> str:
    """The kind of transformation a shared change is (see the module's docstring)."""
    tags = {tag for tag, _, _ in change}
    if tags == {"insert"}:
        return "argument added" if all(added.startswith(",") for _, _, added in change) else "inserted"
    if tags == {"delete"}:
        return "deleted"
    if len(change) == 1 and tags == {"replace"}:
        _, removed, added = change[0]
        if _WORD.fullmatch(removed) and _WORD.fullmatch(added):
            return "word replaced"
    return "rewritten"


def _is_identifier_swap(change: tuple[tuple[str, str, str], ...]) -> bool:
    return (
        all(
            tag == "replace"
            and re.fullmatch(r"[A-Za-z_]\w*", removed)
            and re.fullmatch(r"[A-Za-z_]\w*", added)
            for tag, removed, added in change
        )
        and len({(removed, added) for _, removed, added in change}) == 1
    )


def repeated_group(before: str, after: str) -> tuple[tuple[Block, ...], str] | None:
    """The blocks that make the same change (the largest group), and its kind; None when no change
    recurs under the rules."""
    if not MIN_CHARS <= max(len(before), len(after)) <= MAX_CHARS or rename_of(before, after) is not None:
        return None
    groups: dict[tuple[tuple[str, str, str], ...], list[Block]] = {}
    for block in blocks_between(before, after):
        if max(block.end - block.start, len(block.lines)) > MAX_BLOCK_LINES:
            continue
        change = change_of(before, block)
        if change and not _is_identifier_swap(change):
            groups.setdefault(change, []).append(block)
    best = max(groups.items(), key=lambda item: len(item[1]), default=None)
    if best is None or len(best[1]) < 2:
        return None
    return tuple(best[1][:MAX_GROUP]), kind_of(best[0])


def mine(name: str, git_dir: Path, head: str, counts: dict[str, int] = COUNTS) -> list[Case]:
    """One repository's cases, newest first, per the module's rules."""
    found: dict[str, list[Case]] = {kind: [] for kind in counts}
    log = _git(git_dir, "log", "--no-merges", f"--max-count={MAX_COMMITS}", "--format=%H%x09%s", head)
    for entry in log.splitlines():
        if all(len(found[kind]) >= counts[kind] for kind in counts):
            break
        commit, subject = entry.split("\t", 1)
        if not _git(git_dir, "rev-list", "--parents", "-n", "1", commit).split()[1:]:
            continue
        modified, other = _modified_python(git_dir, commit)
        for path in modified:
            if sum(case.path == path for cases in found.values() for case in cases) >= PER_PATH:
                continue
            before, after = _show(git_dir, f"{commit}^", path), _show(git_dir, commit, path)
            if before is None or after is None:
                continue
            case = _case(name, commit, subject, path, before, after, len(modified) == 1 and not other)
            if case is not None and len(found[case.kind]) < counts[case.kind]:
                found[case.kind].append(case)
                break
    return [case for kind in counts for case in found[kind]]


def _case(
    name: str, commit: str, subject: str, path: str, before: str, after: str, only_file: bool
) -> Case | None:
    group = repeated_group(before, after)
    if group is not None:
        change = group[1]
        blocks = blocks_between(before, after)
        return Case(
            f"{name}-repeat-{commit[:10]}", commit, subject, path, "repeat", before, blocks, change=change
        )
    blocks = blocks_between(before, after)
    if only_file and MIN_CHARS <= len(before) <= MAX_CHARS and len(blocks) == 1:
        block = blocks[0]
        if max(block.end - block.start, len(block.lines)) <= MAX_BLOCK_LINES:
            return Case(f"{name}-silence-{commit[:10]}", commit, subject, path, "silence", before, blocks)
    return None


def main(argv: list[str]) -> int:
    """Mines each repository given (``NAME=DIR``, NAME one of ``REPOSITORIES``) into its data file."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.next_edit.mine_repeats", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--git-dir", action="append", required=True, help="NAME=DIR, a clone (bare is fine)")
    args = parser.parse_args(argv)
    for item in args.git_dir:
        name, _, directory = item.partition("=")
        if name not in REPOSITORIES:
            parser.error(f"unknown repository {name!r} (one of {', '.join(REPOSITORIES)})")
        repository, head = REPOSITORIES[name]
        cases = mine(name, Path(directory), head)
        source: dict[str, object] = {
            "repository": repository,
            "head": head,
            "rules": {
                "counts": COUNTS,
                "min_chars": MIN_CHARS,
                "max_chars": MAX_CHARS,
                "max_block_lines": MAX_BLOCK_LINES,
                "max_group": MAX_GROUP,
                "per_path": PER_PATH,
            },
            "command": "python -m bench.next_edit.mine_repeats --git-dir NAME=DIR",
        }
        out = cases_file(name)
        save_cases(cases, source, out)
        tally = {kind: sum(case.kind == kind for case in cases) for kind in COUNTS}
        print(f"{name}: {len(cases)} cases ({tally}) -> {out} ({out.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
