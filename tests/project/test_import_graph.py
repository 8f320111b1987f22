"""The runtime packages' imports, read from the source with ``ast``: every ``import``, at the top
of a module, inside a function (lazy) or under ``TYPE_CHECKING``, is an edge; a strongly
connected component of more than one module is an import circle."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("solar_core", "langchain_solar", "llamaindex_solar")
#: the one circle left: the memory, its lifecycle and the journal that persists both reach into
#: each other's private members (to be cut by persistence wrapping the memory). No other circle
#: may appear, and this one may not grow.
KNOWN = {
    frozenset(
        {
            "solar_core.memory",
            "solar_core.lifecycle",
            "solar_core.persistence.journal",
            "solar_core.persistence.codec",
        }
    )
}


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def edges(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The runtime modules ``name`` imports (``from pkg import mod`` counts ``pkg.mod``, not
    ``pkg``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            # a module by that name, else a name the module ``base`` defines
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            # a module's own packages are imported before it anyway: not a dependency it chose
            if target and target != name and not name.startswith(target + "."):
                out.add(target)
    return out


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_circle_through_any_kind_of_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [frozenset("abc")]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_but_the_known_one() -> None:
    known = modules()
    graph = {name: edges(name, path, known) for name, path in known.items()}
    found = set(circles(graph))
    assert found <= KNOWN, f"new import circles: {sorted(map(sorted, found - KNOWN))}"


def test_the_core_never_imports_what_the_adapters_share() -> None:
    """``solar_core.integrations`` serves the adapters; the memory, its policies and its
    persistence work without it (and without pydantic, which only its parameter models use)."""
    known = modules()
    shared = {name for name in known if name.startswith("solar_core.integrations")}
    assert shared
    users = {
        name
        for name, path in known.items()
        if name.startswith("solar_core")
        and name not in shared
        and edges(name, path, known) & shared
    }
    assert not users, f"core modules that import solar_core.integrations: {sorted(users)}"
