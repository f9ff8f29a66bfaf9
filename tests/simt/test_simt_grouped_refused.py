"""A SIMT schedule that walks C's tiles in a swizzled (grouped-raster) order is refused with one
clear error, before lowering: its run-time variants used to fail deep in the lowering (KeyError on
the swizzle's quotient symbol in the access bounds) or the printer (an inexact division), a
traceback for the user. An access bound over a symbol the loop bounds do not know keeps its guard
(``_below`` answers False, "unknown") instead of raising."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy

from tilec.app.cli import main
from tilec.errors import UnsupportedError
from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P
from tilec.transforms.simt.lower import _below, lower_simt

SCHEDULE = '''
from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P

PARAMS = dict(M=256, N=256, K=64)


def schedule(M, N, K):
    fusion = GemmFusion(M, N, K, dtype="fp32")
    c = fusion.c
    c.split(0, 32, names=("Mo", "Mi")).split(2, 32, names=("No", "Ni")).split(4, 32, names=("Ko", "Ki"))
    c.reorder([0, 2, 1, 3, 4, 5])
    c.swizzle(0, 1, 3)
    c.merge(0)
    c.parallelize(0, P.BIDx).parallelize(1, P.TIDy).parallelize(2, P.TIDx)
    fusion.propagate()
    return fusion
'''


def _grouped(swizzle: bool) -> GemmFusion:
    fusion = GemmFusion(256, 256, 64, dtype="fp32")
    c = fusion.c
    c.split(0, 32, names=("Mo", "Mi")).split(2, 32, names=("No", "Ni")).split(4, 32, names=("Ko", "Ki"))
    c.reorder([0, 2, 1, 3, 4, 5])
    if swizzle:
        c.swizzle(0, 1, 3)
    c.merge(0)
    c.parallelize(0, P.BIDx).parallelize(1, P.TIDy).parallelize(2, P.TIDx)
    fusion.propagate()
    return fusion


def test_lower_refuses_a_swizzled_tile_order_and_takes_the_plain_one() -> None:
    with pytest.raises(UnsupportedError, match="swizzled tile order"):
        lower_simt(_grouped(True))
    assert lower_simt(_grouped(False), variants=True).variants  # the same walk unswizzled


def test_gen_says_it_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "grouped_simt.py"
    path.write_text(SCHEDULE)
    assert main(["gen", str(path), "--target", "cuda", "-o", str(tmp_path / "k.cu")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "swizzled tile order" in err[0], err


def test_a_bound_over_an_unknown_symbol_keeps_the_guard() -> None:
    i, q = sympy.Symbol("i", integer=True, nonnegative=True), sympy.Symbol("M_q", integer=True)
    assert _below(i, {i: sympy.Integer(8)}, 8)  # proved
    assert not _below(i + q, {i: sympy.Integer(8)}, 8)  # M_q unbounded: unknown, not an error
