"""One call empties every cache tilec keeps in memory (issue 27: caches as objects, at most six
module-level, all cleared by one call)."""

from __future__ import annotations

import ast
from pathlib import Path

from tilec.proofs.cache import CONTENT
from tilec.proofs.cache import SESSION as PROOFS
from tilec.runtime.session import SESSION, clear_caches, derive_from_file
from tilec.transforms.memo import TRANSFORMS

ROOT = Path(__file__).resolve().parents[2]


def test_clear_caches_empties_every_table() -> None:
    from tilec.runtime.build import kernel_plan
    from tilec.runtime.loader import load_schedule

    derive_from_file(ROOT / "examples" / "seed004_persistent_cluster.py", {"CM": 1, "CN": 2})
    kernel_plan(load_schedule(ROOT / "examples" / "gemm_basic.py", {}), target="cuda")
    filled = {name: obj.sizes() for name, obj in
              (("proofs", PROOFS), ("content", CONTENT), ("transforms", TRANSFORMS))}
    assert any(filled["proofs"].values()) and any(filled["content"].values())
    assert filled["transforms"]["replayed"] > 0
    assert len(SESSION._derived) > 0
    clear_caches()
    for obj in (PROOFS, CONTENT, TRANSFORMS):
        assert not any(obj.sizes().values()), obj.sizes()
    assert len(SESSION._derived) == 0 and len(SESSION._symbolic) == 0


def _module_caches(path: Path) -> list[str]:
    """Module-level memo containers of one file: functools caches on top-level functions and
    top-level names bound to an empty dict/set/list or a cache object."""
    tree = ast.parse(path.read_text())
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for d in node.decorator_list:
                text = ast.unparse(d)
                if "lru_cache" in text or text in ("cache", "functools.cache"):
                    out.append(f"{path.name}:{node.name}")
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            value = node.value
            if value is None:
                continue
            text = ast.unparse(value)
            target = ast.unparse(node.targets[0] if isinstance(node, ast.Assign) else node.target)
            called = text.split("(", 1)[0].rsplit(".", 1)[-1] if text.endswith(")") else ""
            if text in ("{}", "set()", "dict()", "[]") or called.endswith(
                    ("LRU", "Memo", "Table", "Cache", "Session", "State")):
                if target.isupper() and text == "[]":
                    continue  # a constant list built below (module tables), not a cache
                out.append(f"{path.name}:{target}")
    return out


def test_at_most_six_module_level_caches() -> None:
    found = [c for p in sorted((ROOT / "tilec").rglob("*.py")) for c in _module_caches(p)]
    assert len(found) <= 6, found
