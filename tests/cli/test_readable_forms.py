"""`show` and `explain` print index maps simplified under their loop bounds (issue 18): no `/1`,
`*1` or `+ 0`, and the printed form equals the IR's map at every sampled point of the loop nest."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import sympy

from tilec.app.commands.show import readable_map
from tilec.ir import index_map
from tilec.proofs import compile_int
from tilec.runtime.loader import load_schedule

EX = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("example", ["seed004_persistent_cluster.py", "gemm_decomposition.py"])
def test_printed_index_maps_are_simplified_and_equal(example: str) -> None:
    fusion = load_schedule(EX / example, {}).fusion
    rng = random.Random(18)
    for view in fusion.views():
        im = index_map(view)
        logical, predicates = readable_map(im)
        raw_text = " ".join(str(e) for e in im.logical.values())
        text = " ".join(str(e) for e in logical.values())
        assert "/1)" not in text and "*1)" not in text and "+ 0" not in text, text
        assert len(text) <= len(raw_text)
        syms = list(im.bounds)

        def one(e, syms=syms):  # type: ignore[no-untyped-def]
            fn = compile_int([e], syms)
            return lambda *point: fn(*point)[0]

        raw = {k: one(e) for k, e in im.logical.items()}
        shown = {k: one(e) for k, e in logical.items()}
        alive = one(sympy.And(*im.predicates))
        shown_alive = one(sympy.And(*predicates))
        for _ in range(300):
            point = [rng.randrange(int(im.bounds[s])) for s in syms]
            for name, f in raw.items():
                try:
                    want = f(*point)
                except ZeroDivisionError:  # a padded point where the IR's own map divides by 0
                    continue
                assert shown[name](*point) == want, (view.name, name, point)
            assert bool(shown_alive(*point)) == bool(alive(*point)), (view.name, point)
