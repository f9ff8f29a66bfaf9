"""Scheduling verbs as before / expected pairs (TVM style), negative axes, and the printed
notation ``<itype><ptype>.<name>{<extent>}`` parsed back (helpers.parse_view)."""

from __future__ import annotations

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from tilec.ir import GemmFusion, IterDomain, IterType, Split, TensorView, ceil_div, index_map
from tilec.ir import ParallelType as P

from .helpers import parse_axis, parse_view


def abc(*extents: int) -> TensorView:
    return TensorView("T", [IterDomain(n, sympy.Integer(e)) for n, e in zip("abcde", extents, strict=False)])


def names(view: TensorView) -> list[str]:
    return [a.name for a in view.loop]


# -- reorder: nvFuser's {old: new} and the full list new_order[i] = old ----------------------

REORDER_CASES = [
    # before         mapping              expected
    ("abc",  {2: 0},             "cab"),
    ("abc",  {0: 2},             "bca"),
    ("abc",  {-1: 0},            "cab"),
    ("abc",  {0: -1, -1: 0},     "cba"),
    ("abcd", {0: 2, 3: 0},       "dbac"),
    ("abcd", {1: 1},             "abcd"),
    ("abcd", {},                 "abcd"),
    ("abc",  [1, 0, 2],          "bac"),
    ("abc",  [2, 0, 1],          "cab"),
    ("abc",  [-1, 0, 1],         "cab"),
    ("abcd", [3, 2, 1, 0],       "dcba"),
]


@pytest.mark.parametrize("before,mapping,expected", REORDER_CASES)
def test_reorder(before: str, mapping: object, expected: str) -> None:
    t = abc(*range(2, 2 + len(before)))
    assert "".join(names(t.reorder(mapping))) == expected  # type: ignore[arg-type]
    # extents travel with their axes
    assert [int(a.extent) for a in t.loop] == [2 + "abcd".index(c) for c in expected]


# -- split / merge / swizzle / broadcast / parallelize -------------------------------------------


def test_split_inner_and_outer() -> None:
    assert str(abc(100).split(0, 32)) == "T[iS.ao{4}, iS.ai{32}]"
    assert str(abc(100).split(0, 32, inner=False)) == "T[iS.ao{32}, iS.ai{4}]"
    assert str(abc(100, 6).split(-1, 4, names=("x", "y"))) == "T[iS.a{100}, iS.x{2}, iS.y{4}]"
    t = TensorView("T", [IterDomain("M", sympy.Symbol("M", integer=True, positive=True))])
    assert str(t.split(0, "BM")) == "T[iS.Mo{ceiling(M/BM)}, iS.Mi{BM}]"


def test_split_divisibility() -> None:
    m = sympy.Symbol("M", integer=True, positive=True)
    assert Split.make(IterDomain("a", sympy.Integer(96)), 32).divisible is True
    assert Split.make(IterDomain("a", sympy.Integer(100)), 32).divisible is False
    assert Split.make(IterDomain("a", m), 32).divisible is None
    assert Split.make(IterDomain("a", 4 * m), 4).divisible is True
    assert ceil_div(sympy.Integer(100), sympy.Integer(32)) == 4



_POS = sympy.symbols("M N K BM BN CM SMS", integer=True, positive=True)
_ATOMS = [*_POS, sympy.ceiling(_POS[0] / _POS[3]), sympy.ceiling(sympy.ceiling(_POS[1] / _POS[4]) / _POS[5]),
          sympy.Symbol("s", integer=True), sympy.Symbol("u", integer=True, nonnegative=True),
          _POS[0] + 1, sympy.floor(_POS[2] / 64), sympy.Integer(2), sympy.Integer(3), sympy.Integer(128)]
_PRODUCT = st.lists(st.tuples(st.sampled_from(_ATOMS), st.integers(1, 2)), min_size=1, max_size=4).map(
    lambda fs: sympy.Mul(*[b**k for b, k in fs]))


@settings(max_examples=150, deadline=None)
@given(_PRODUCT, _PRODUCT)
def test_ceil_div_is_sympys_ceiling(a: sympy.Expr, b: sympy.Expr) -> None:
    # ceil_div skips sympy's evaluation for ratios it cannot change: the node must be the same
    got, want = ceil_div(a, b), sympy.ceiling(a / b)
    assert got == want and sympy.srepr(got) == sympy.srepr(want), (a, b)

def test_split_index_and_predicate() -> None:
    im = index_map(abc(100).split(0, 32))
    o, i = im.symbols
    assert im.bounds == {o: 4, i: 32}
    for point in im.points():  # a = 32*o + i, in bounds iff a < 100
        a = 32 * point[o] + point[i]
        assert im.evaluate(point) == {"a": a}
        assert im.in_bounds(point) == (a < 100)


def test_merge() -> None:
    t = abc(4, 8, 3).merge(0)
    assert str(t) == "T[iS.a_b{32}, iS.c{3}]"
    im = index_map(t)
    ab, c = im.symbols
    for point in im.points():  # a = ab / 8, b = ab % 8
        assert im.evaluate(point) == {"a": point[ab] // 8, "b": point[ab] % 8, "c": point[c]}
    assert im.predicates == []
    # the merged axis takes the first of the two positions; outer/inner follow the arguments
    assert str(abc(4, 8, 3).merge(2, 0, name="ca")) == "T[iS.ca{12}, iS.b{8}]"
    assert str(abc(4, 8, 3).merge(-2)) == "T[iS.a{4}, iS.b_c{24}]"


def test_merge_iter_types() -> None:
    t = abc(4).broadcast(1, 8, name="x").broadcast(2, 2, name="y")
    assert str(t.merge(1)) == "T[iS.a{4}, bS.x_y{16}]"
    assert str(abc(4).broadcast(1, 8).merge(0)) == "T[iS.a_b{32}]"
    f = GemmFusion(M=4, N=4, K=8)
    f.c.split(2, 2).merge(2)  # reduction with reduction stays a reduction
    assert f.c.loop[2].iter_type is IterType.REDUCTION


def test_swizzle() -> None:
    t = abc(8, 8).swizzle(0, 1, 4)
    assert str(t) == "T[iS.ag{8}, iS.bg{8}]"
    im = index_map(t)
    xo, yo = im.symbols
    # the first group of 4 rows is walked column by column: loop (0, 1) is tile (1, 0)
    assert im.evaluate({xo: 0, yo: 1}) == {"a": 1, "b": 0}
    assert im.evaluate({xo: 0, yo: 4}) == {"a": 0, "b": 1}
    assert im.evaluate({xo: 4, yo: 0}) == {"a": 4, "b": 0}


def test_broadcast() -> None:
    t = abc(4, 6).broadcast(1)  # "b" is taken by a logical axis: the default name moves on
    assert str(t) == "T[iS.a{4}, bS.b2{1}, iS.b{6}]"
    assert [a.iter_type for a in t.logical] == [IterType.ITERATION, IterType.ITERATION, IterType.BROADCAST]
    assert str(abc(4).broadcast(-1, 8, name="n")) == "T[iS.a{4}, bS.n{8}]"  # -1 appends
    assert t.loop[1].expanded is False and abc(4).broadcast(0, 8).loop[0].expanded is True


def test_parallelize_and_axis_ref() -> None:
    t = abc(4, 8).parallelize(-1, P.TIDx)
    assert str(t) == "T[iS.a{4}, iTIDx.b{8}]"
    t.axis(0).parallelize(P.BIDx)
    assert str(t) == "T[iBIDx.a{4}, iTIDx.b{8}]"
    assert t.axis(-2).extent == 4 and t[-1].ptype is P.TIDx
    t.parallelize(0, P.SERIAL).parallelize(1, P.BIDx)  # rebinding frees the type
    assert str(t) == "T[iS.a{4}, iBIDx.b{8}]"
    assert [a.symbol_name for a in (P.BIDx, P.CIDx, P.RankX, P.TIDz, P.Mma)] == [
        "bidx", "cidx", "rank_x", "tidz", None]


@pytest.mark.parametrize("neg,pos", [(-1, 2), (-2, 1), (-3, 0)])
def test_negative_axes_mean_the_same_as_positive(neg: int, pos: int) -> None:
    for verb, args in [("split", (4,)), ("parallelize", (P.BIDy,))]:
        a, b = abc(8, 12, 16), abc(8, 12, 16)
        getattr(a, verb)(neg, *args)
        getattr(b, verb)(pos, *args)
        assert str(a) == str(b)
    if pos < 2:
        assert str(abc(8, 12, 16).merge(neg)) == str(abc(8, 12, 16).merge(pos))


def test_gemm_fusion_views_and_propagation() -> None:
    f = GemmFusion(M=256, N=256, K=64)
    assert str(f.c) == "C[iS.M{256}, iS.N{256}, rS.K{64}]"
    assert str(f.a) == "A[iS.M{256}, iS.K{64}]" and str(f.b) == "B[iS.K{64}, iS.N{256}]"
    assert str(GemmFusion(M=8, N=8, K=8, b_layout="nk").b) == "B[iS.N{8}, iS.K{8}]"
    f.c.split(0, 128).split(2, 128).parallelize(0, P.BIDy).parallelize(2, P.BIDx)
    f.c.parallelize(1, P.Mma)
    f.propagate()
    assert str(f.a_smem) == "A_smem[iBIDy.Mo{2}, iBulk.Mi{128}, bBIDx.No{2}, bS.Ni{128}, iS.K{64}]"
    assert str(f.b_smem) == "B_smem[bBIDy.Mo{2}, bBulk.Mi{128}, iBIDx.No{2}, iS.Ni{128}, iS.K{64}]"


def test_operands_follow_c_after_propagate() -> None:
    f = GemmFusion(M=256, N=256, K=64)
    f.propagate()
    f.c.split(0, 64)
    a, _ = f.operands()
    assert [x.name for x in a.loop] == ["Mo", "Mi", "N", "K"]


def test_broadcast_on_c_propagates() -> None:
    f = GemmFusion(M=64, N=64, K=32)
    f.c.broadcast(1, name="g")
    f.propagate()
    assert str(f.a_smem) == "A_smem[iS.M{64}, bS.g{1}, bS.N{64}, iS.K{32}]"
    assert list(index_map(f.b_smem).logical) == ["M", "K", "N", "g"]


# -- the notation round trip ----------------------------------------------------------------------

_SYMS = {n: sympy.Symbol(n, integer=True, positive=True) for n in ("M", "N", "K", "BM", "BN")}


@pytest.mark.parametrize("itype", list(IterType))
@pytest.mark.parametrize("ptype", list(P))
def test_axis_notation_round_trip(itype: IterType, ptype: P) -> None:
    for extent in (sympy.Integer(7), sympy.ceiling(_SYMS["M"] / 128), _SYMS["BN"] * 2):
        ax = IterDomain("Mo", extent, itype, ptype)
        assert parse_axis(str(ax), _SYMS) == (itype, ptype, "Mo", extent)
        assert repr(ax) == f"IterDomain({ax})"


def test_view_notation_round_trip() -> None:
    f = GemmFusion(M="M", N="N", K="K")
    f.c.split(0, "BM").split(2, "BN").reorder({2: 1}).merge(0).parallelize(0, P.BIDx)
    f.c.parallelize(1, P.Mma).parallelize(-1, P.Mma)
    f.propagate()
    for v in f.views():
        name, axes = parse_view(str(v), _SYMS)
        assert name == v.name
        assert axes == [(a.iter_type, a.ptype, a.name, a.extent) for a in v.loop]
    assert parse_view(str(f.c), _SYMS)[1][0] == (
        IterType.ITERATION, P.BIDx, "Mo_No",
        sympy.ceiling(_SYMS["M"] / _SYMS["BM"]) * sympy.ceiling(_SYMS["N"] / _SYMS["BN"]))
