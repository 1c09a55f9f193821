"""Where the names a file imports come from, for the languages whose imports name files."""

from __future__ import annotations

import posixpath
import re

_PY_FROM = re.compile(r"from\s+(\.*[\w.]*)\s+import\s+\(?([^)]*)\)?")
_PY_IMPORT_ITEM = re.compile(r"([\w.]+)(?:\s+as\s+(\w+))?")
_JS_IMPORT = re.compile(r"\bimport\s+(?:type\s+)?([\w$*{},\s]+?)\s+from\s+['\"]([^'\"]+)['\"]")
_JS_NAME = re.compile(r"\*\s+as\s+([\w$]+)|([\w$]+)(?:\s+as\s+([\w$]+))?")
_GO_IMPORT = re.compile(r"\bimport\s*(?:\(([^)]*)\)|((?:\w+\s+)?\"[^\"]+\"))")
_GO_SPEC = re.compile(r"(?:([\w.]+)\s+)?\"([^\"]+)\"")
_RUST_USE = re.compile(r"\buse\s+([\w:]+?)(?:::\{([^}]*)\})?(?:\s+as\s+(\w+))?\s*;")
_JAVA_IMPORT = re.compile(r"^[ \t]*import[ \t]+(static[ \t]+)?([\w.]+)[ \t]*;", re.MULTILINE)


def imported_paths(text: str, path: str) -> dict[str, list[str]]:
    """Local name -> path stems (no extension) of the files that may define it, relative to the
    workspace; a stem matches a file whose path ends with it (``pkg/mod`` matches ``src/pkg/mod.py``)."""
    if path.endswith((".py", ".pyi")):
        return _python_imports(text, path)
    if path.endswith((".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts")):
        return _js_imports(text, path)
    if path.endswith(".go"):
        return _go_imports(text)
    if path.endswith(".rs"):
        return _rust_imports(text)
    if path.endswith(".java"):
        return _java_imports(text)
    return {}


def _python_module_stems(module: str, path: str) -> list[str]:
    dots = len(module) - len(module.lstrip("."))
    dotted = module[dots:].replace(".", "/")
    if dots:
        base = posixpath.dirname(path)
        for _ in range(dots - 1):
            base = posixpath.dirname(base)
        dotted = posixpath.join(base, dotted) if dotted else base
    return [dotted, f"{dotted}/__init__"] if dotted else []


def _python_import_statements(text: str) -> list[str]:
    """The import statements of a Python file, each on one line (runs per keystroke: no regex over
    the whole file, only over lines that mention ``import``)."""
    lines = text.split("\n")
    statements: list[str] = []
    for index, line in enumerate(lines):
        if "import" not in line:
            continue
        statement = line.strip()
        if not statement.startswith(("from ", "import ")):
            continue
        following = index + 1
        while "(" in statement and ")" not in statement and following < len(lines):
            statement += " " + lines[following].strip()
            following += 1
        statements.append(statement.split("#", 1)[0])
    return statements


def _python_imports(text: str, path: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    statements = _python_import_statements(text)
    for match in filter(None, (_PY_FROM.match(statement) for statement in statements)):
        stems = _python_module_stems(match.group(1), path)
        for item in match.group(2).split(","):
            words = item.split()
            if not words or words[0] == "*":
                continue
            local = words[-1] if len(words) == 3 and words[1] == "as" else words[0]
            # `from pkg import mod` may import a module as well as a name defined in pkg.
            module_stems = [f"{stem}/{words[0]}" for stem in stems if not stem.endswith("__init__")]
            found[local] = stems + module_stems
    for statement in statements:
        if not statement.startswith("import "):
            continue
        for item in statement[len("import ") :].split(","):
            item_match = _PY_IMPORT_ITEM.fullmatch(item.strip())
            if item_match is not None:
                module, alias = item_match.group(1), item_match.group(2)
                found[alias or module.split(".")[0]] = _python_module_stems(module, path)
    return found


def _js_imports(text: str, path: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for match in _JS_IMPORT.finditer(text):
        clause, source = match.group(1), match.group(2)
        if not source.startswith("."):
            continue
        stem = posixpath.normpath(posixpath.join(posixpath.dirname(path), source))
        stem = re.sub(r"\.(js|jsx|ts|tsx|mjs|cjs)$", "", stem)
        stems = [stem, f"{stem}/index"]
        for namespace, name, alias in _JS_NAME.findall(clause):
            found[namespace or alias or name] = stems
    return found


def _go_imports(text: str) -> dict[str, list[str]]:
    """A Go import names a package, a folder: ``util.Sum`` is defined in some file of ``.../util/``."""
    found: dict[str, list[str]] = {}
    for match in _GO_IMPORT.finditer(text):
        for alias, source in _GO_SPEC.findall(match.group(1) or match.group(2)):
            package = source.rstrip("/").rsplit("/", 1)[-1]
            if alias not in ("_", "."):
                found[alias or package] = [package + "/"]
    return found


def _rust_imports(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for match in _RUST_USE.finditer(text):
        path, group, alias = match.group(1), match.group(2), match.group(3)
        if group is not None:
            module, items = path, [item.strip() for item in group.split(",") if item.strip()]
        else:
            module, _, last = path.rpartition("::")
            items = [f"{last} as {alias}" if alias else last]
        segments = [segment for segment in module.split("::") if segment not in ("crate", "self", "super")]
        stem = "/".join(segments)
        stems = [stem, f"{stem}/mod"] if stem else ["lib", "main"]
        for item in items:
            words = item.split()
            if not words or words[0] in ("self", "*"):
                continue
            local = words[-1] if len(words) == 3 and words[1] == "as" else words[0]
            # `use a::b;` may name the module b (a/b.rs) as well as an item of a.
            found[local] = [*stems, f"{stem}/{words[0]}" if stem else words[0]]
    return found


def _java_imports(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for match in _JAVA_IMPORT.finditer(text):
        is_static, dotted = match.group(1), match.group(2)
        owner, _, name = dotted.rpartition(".")
        # A class lives in its own file; a static import names a member of the class before it.
        found[name] = [owner.replace(".", "/") if is_static else dotted.replace(".", "/")]
    return found


def path_matches_stem(path: str, stem: str) -> bool:
    """Whether a workspace path is the file a stem names (ignoring the extension and leading folders);
    a stem ending in "/" names a folder (any file directly in it)."""
    if stem.endswith("/"):
        folder = posixpath.dirname(path)
        return folder == stem[:-1] or folder.endswith("/" + stem[:-1])
    without_extension = path.rsplit(".", 1)[0]
    return without_extension == stem or without_extension.endswith("/" + stem)
