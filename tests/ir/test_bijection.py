"""Property: after any sequence of split / merge / reorder / swizzle, the in-bounds loop points
map one-to-one onto the logical box (every logical index hit exactly once).

Oracle: brute-force enumeration of the loop domain (IndexMap.points filtered by in_bounds)
against the set of logical indices built from the extents alone."""

from __future__ import annotations

import math

import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilec.ir import GemmFusion, IterDomain, IterType, TensorView, index_map

from .helpers import box, cdiv, evaluate, hits, in_bounds

MAX_LOOP_POINTS = 96  # padded loop domain, keeps enumeration cheap


def _loop_points(view: TensorView) -> int:
    return math.prod(int(a.extent) for a in view.loop)


def apply_random_ops(view: TensorView, data: st.DataObject, n_ops: int) -> list[str]:
    """Apply up to ``n_ops`` random legal transforms to ``view``; return what was done."""
    done: list[str] = []
    for _ in range(n_ops):
        n = view.ndim
        kinds = ["split", "reorder"] + (["merge", "swizzle"] if n >= 2 else [])
        kind = data.draw(st.sampled_from(kinds))
        if kind == "split":
            pos = data.draw(st.integers(-n, n - 1))
            factor = data.draw(st.integers(1, 4))
            inner = data.draw(st.booleans())
            e = int(view[pos].extent)
            grown = _loop_points(view) // e * cdiv(e, factor) * factor
            if grown > MAX_LOOP_POINTS:
                continue
            view.split(pos, factor, inner=inner)
            done.append(f"split({pos}, {factor}, inner={inner})")
        elif kind == "merge":
            po = data.draw(st.integers(0, n - 1))
            pi = data.draw(st.integers(0, n - 1).filter(lambda p, po=po: p != po))
            types = {view[po].iter_type, view[pi].iter_type}
            if types == {IterType.REDUCTION, IterType.ITERATION}:
                continue
            view.merge(po, pi)
            done.append(f"merge({po}, {pi})")
        elif kind == "reorder":
            perm = data.draw(st.permutations(range(n)))
            if data.draw(st.booleans()):
                view.reorder(list(perm))
                done.append(f"reorder({list(perm)})")
            else:  # dict form: {old: new}, a random subset of the moves
                full = {old: new for new, old in enumerate(perm)}
                keys = data.draw(st.lists(st.sampled_from(range(n)), unique=True))
                view.reorder({k: full[k] for k in keys})
                done.append(f"reorder({ {k: full[k] for k in keys} })")
        else:
            px = data.draw(st.integers(0, n - 1))
            py = data.draw(st.integers(0, n - 1).filter(lambda p, px=px: p != px))
            group = data.draw(st.integers(1, 3))
            if {view[px].iter_type, view[py].iter_type} == {IterType.REDUCTION, IterType.ITERATION}:
                continue  # refused: C's index would depend on K's loop (tests/must_fail)
            view.swizzle(px, py, group)
            done.append(f"swizzle({px}, {py}, {group})")
    return done


extents = st.lists(st.integers(1, 5), min_size=1, max_size=3).filter(
    lambda es: math.prod(es) <= 40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(extents=extents, n_ops=st.integers(0, 5), data=st.data())
def test_tensorview_schedule_is_a_bijection(extents: list[int], n_ops: int, data: st.DataObject) -> None:
    names = ["a", "b", "c"][: len(extents)]
    view = TensorView("T", [IterDomain(n, sympy.Integer(e)) for n, e in zip(names, extents, strict=True)])
    done = apply_random_ops(view, data, n_ops)
    got = hits(index_map(view), names)
    expected = box(extents)
    assert set(got) == expected, (done, sorted(set(got) ^ expected))
    assert all(c == 1 for c in got.values()), (done, {k: c for k, c in got.items() if c > 1})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(1, 5), n=st.integers(1, 4), k=st.integers(1, 3), n_ops=st.integers(0, 5),
       data=st.data())
def test_gemm_output_schedule_is_a_bijection(m: int, n: int, k: int, n_ops: int,
                                            data: st.DataObject) -> None:
    f = GemmFusion(M=m, N=n, K=k)
    done = apply_random_ops(f.c, data, n_ops)
    got = hits(index_map(f.c), ["M", "N", "K"])
    expected = box([m, n, k])
    assert set(got) == expected, (done, sorted(set(got) ^ expected))
    assert all(c == 1 for c in got.values()), done


def test_swizzle_is_tritons_grouped_order() -> None:
    """Swizzle(x, y, G) visits tiles in Triton's GROUP_SIZE_M order (tutorial 03, written out)."""
    num_m, num_n, group_m = 5, 3, 2
    view = TensorView("T", [IterDomain("x", sympy.Integer(num_m)), IterDomain("y", sympy.Integer(num_n))])
    im = index_map(view.swizzle(0, 1, group_m))
    sx, sy = im.symbols
    for pid in range(num_m * num_n):
        in_group = group_m * num_n
        first_m = pid // in_group * group_m
        size_m = min(num_m - first_m, group_m)
        want = (first_m + pid % in_group % size_m, pid % in_group // size_m)
        got = im.evaluate({sx: pid // num_n, sy: pid % num_n})
        assert (got["x"], got["y"]) == want, pid


def test_index_map_api_agrees_with_the_fast_evaluation() -> None:
    """hits() evaluates by xreplace; IndexMap.in_bounds / evaluate must give the same values."""
    f = GemmFusion(M=5, N=3, K=2)
    f.c.split(0, 2).split(2, 2).swizzle(0, 2, 2).merge(0, 2).split(0, 4).reorder({-1: 0})
    im = index_map(f.c)
    points = list(im.points())
    assert len(points) == 64 and len(im.predicates) == 3
    for point in points[::3]:
        assert im.in_bounds(point) == in_bounds(im, point)
        assert im.evaluate(point) == evaluate(im, point)
    assert sum(im.in_bounds(p) for p in points[:24]) == sum(in_bounds(im, p) for p in points[:24])


def test_split_predicate_only_when_not_divisible() -> None:
    exact = index_map(TensorView("T", [IterDomain("a", sympy.Integer(12))]).split(0, 4))
    ragged = index_map(TensorView("T", [IterDomain("a", sympy.Integer(10))]).split(0, 4))
    assert exact.predicates == []
    assert len(ragged.predicates) == 1
    assert sum(ragged.in_bounds(p) for p in ragged.points()) == 10
