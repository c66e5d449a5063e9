"""The size of the code's rooms: the largest classes, import circles, tests importing tests.

Run from a checkout: ``python -m tools.rooms [--top N]``. It reads the source as text (``ast``), runs
nothing of it, and prints three lists that a refactor is judged by:

- the largest classes of ``engine/`` and ``bot/``: lines and the attributes set on ``self``;
- import circles between modules of ``engine/`` and ``bot/`` (any import, annotations included);
- test modules that import another test module (shared set-up belongs in fixtures or a helpers
  module).
"""
from __future__ import annotations

import argparse
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("engine", "bot")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def product_files() -> list[Path]:
    return sorted(p for pkg in PRODUCT for p in (ROOT / pkg).rglob("*.py"))


def classes(path: Path) -> list[tuple[str, int, int]]:
    """(qualified name, lines, attributes set on self) of each top-level class in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        attrs = set()
        for sub in ast.walk(node):
            targets = []
            if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            for t in targets:
                for el in ast.walk(t):
                    if (isinstance(el, ast.Attribute) and isinstance(el.value, ast.Name)
                            and el.value.id == "self"):
                        attrs.add(el.attr)
        lines = (node.end_lineno or node.lineno) - node.lineno + 1
        out.append((f"{module_name(path)}.{node.name}", lines, len(attrs)))
    return out


def imports(path: Path, known: set[str]) -> set[str]:
    """The product modules a file imports (absolute and relative), anywhere in it."""
    mod = module_name(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from pkg import mod` imports the module, not the package's other names
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                     for a in node.names]
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != mod:
                found.add(name)
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


def test_cross_imports() -> list[tuple[str, str]]:
    tests = sorted((ROOT / "tests").rglob("test_*.py"))
    names = {module_name(p) for p in tests}
    pairs = []
    for p in tests:
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                target = node.module if not node.level else None
                if node.level:
                    pkg = module_name(p).rpartition(".")[0].split(".")
                    target = ".".join(pkg[: len(pkg) - node.level + 1] + [node.module])
                if target in names:
                    pairs.append((module_name(p), target))
    return pairs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=10, help="how many classes to list (default 10)")
    args = ap.parse_args(argv)
    files = product_files()
    found = [c for f in files for c in classes(f)]
    print(f"largest classes of {', '.join(PRODUCT)} (lines, attributes on self):")
    for name, lines, attrs in sorted(found, key=lambda c: -c[1])[: args.top]:
        print(f"  {lines:5d} lines {attrs:4d} attributes  {name}")
    known = {module_name(f) for f in files}
    graph = {module_name(f): imports(f, known) for f in files}
    groups = circles(graph)
    print(f"import circles: {len(groups)}")
    for g in groups:
        print("  " + " <-> ".join(g))
    pairs = test_cross_imports()
    print(f"test modules importing another test module: {len(pairs)}")
    for a, b in pairs:
        print(f"  {a} -> {b}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
