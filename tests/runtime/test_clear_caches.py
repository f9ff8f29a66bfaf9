"""One call empties every cache tilec keeps in memory (issue 27: caches as objects, at most six
module-level, all cleared by one call)."""

from __future__ import annotations

from pathlib import Path

from tilec.proofs.cache import CONTENT, SESSION as PROOFS
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

