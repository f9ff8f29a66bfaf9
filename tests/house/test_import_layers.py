"""The package's import graph (issue 27's "house"): no import circles between tilec's modules and
no arrow back up between its layers, counting imports inside functions too (a lazy import still
ties two modules).  Session 12's SIMT cost model imported the SIMT launcher lazily while the
launcher imported the model: a circle, and an arrow from transforms up to codegen, that no test
saw."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "tilec"

# the layers, bottom first: a module may import its own layer and the ones below it
LAYERS = (
    ("tilec.proofs", "tilec.errors"),
    ("tilec.policy",),
    ("tilec.ir",),
    ("tilec.dtypes", "tilec.transforms"),
    ("tilec.codegen",),
    ("tilec.runtime",),
    ("tilec.library", "tilec.testing"),
    ("tilec.app",),
    ("tilec.__main__", "tilec"),
)


def module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> int:
    best = (-1, -1)  # (prefix length, layer)
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if module == p or module.startswith(p + "."):
                best = max(best, (len(p), i))
    assert best[1] >= 0, f"{module} is in no layer: add it to LAYERS"
    return best[1]


def graph() -> nx.DiGraph:
    modules = {module_of(p): p for p in PKG.rglob("*.py")}
    g = nx.DiGraph()
    g.add_nodes_from(modules)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets = [f"{base}.{a.name}" for a in node.names] + [base]
            for t in targets:
                # the longest tilec module the import names (``from x import y``: y may be a name)
                while t and t not in modules:
                    t = t.rpartition(".")[0]
                if t and t != name and not name.startswith(t + "."):  # a package's own __init__
                    g.add_edge(name, t)
    return g


def test_no_import_circles() -> None:
    g = graph()
    cycles = [c for c in nx.simple_cycles(g) if len(c) > 1]
    assert not cycles, "import circles: " + "; ".join(" -> ".join(c + c[:1]) for c in cycles[:5])


def test_no_arrow_back_up() -> None:
    up = [(a, b) for a, b in graph().edges if layer(b) > layer(a)]
    assert not up, "imports from a lower layer up: " + ", ".join(f"{a} -> {b}" for a, b in up)


def test_the_check_sees_a_circle_and_an_arrow_up() -> None:
    # the detector itself: the graph holds real edges (the CUDA launcher imports the printer) and a
    # planted reverse edge would be both a circle and an arrow up
    g = graph()
    assert g.has_edge("tilec.codegen.cuda.launch", "tilec.codegen.cuda.printer")
    assert layer("tilec.transforms.simt.cost") < layer("tilec.codegen.cuda.simt.launch")
    g.add_edge("tilec.ir", "tilec.app.cli")
    assert layer("tilec.app.cli") > layer("tilec.ir")
    g.add_edge("tilec.app.cli", "tilec.ir")
    assert any(len(c) > 1 for c in nx.simple_cycles(g))


def test_no_module_over_500_lines() -> None:
    long = {module_of(p): n for p in PKG.rglob("*.py") if (n := len(p.read_text().splitlines())) > 500}
    assert not long, f"modules over 500 lines (issue 27): {long}"
