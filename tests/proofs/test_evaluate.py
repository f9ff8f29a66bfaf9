"""tilec's exact evaluator (tilec.proofs.evaluate) against sympy's own exact evaluation, on random
integer expression trees with the shapes tilec's index maps hold: rational coefficients, symbolic
divisors, nested floors, Mod, Min/Max, Piecewise and relations whose sides are fractions, at
negative values too (``G`` is a negative divisor); and the grid evaluator against the scalar one."""

from __future__ import annotations

import operator
from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from tilec.proofs.evaluate import compile_int, evaluate_grid, int_source

X, Y = sympy.symbols("x y", integer=True)
P, Q = sympy.symbols("P Q", integer=True, positive=True)
G = sympy.Symbol("G", integer=True, negative=True)
SYMS = [X, Y, P, Q, G]


def _rational_tree(depth: int) -> st.SearchStrategy[sympy.Expr]:
    leaf = st.one_of(st.sampled_from(SYMS),
                     st.integers(-7, 9).map(sympy.Integer),
                     st.tuples(st.integers(-5, 5), st.integers(1, 4)).map(lambda t: sympy.Rational(*t)))
    if depth == 0:
        return leaf
    sub = _rational_tree(depth - 1)
    return st.one_of(
        leaf,
        st.tuples(sub, sub).map(lambda t: t[0] + t[1]),
        st.tuples(sub, sub).map(lambda t: t[0] * t[1]),
        st.tuples(sub, st.sampled_from([P, Q, 2 * P, P + 1, G])).map(lambda t: t[0] / t[1]),
    )


def _int_tree(depth: int) -> st.SearchStrategy[sympy.Expr]:
    """Integer-valued: floors, ceilings and Mods of rational trees, and integer combinations."""
    rat = _rational_tree(2)
    leaf = st.one_of(st.sampled_from(SYMS), st.integers(-9, 9).map(sympy.Integer),
                     rat.map(sympy.floor), rat.map(sympy.ceiling))
    if depth == 0:
        return leaf
    sub = _int_tree(depth - 1)
    return st.one_of(
        leaf,
        st.tuples(sub, sub).map(lambda t: t[0] + 3 * t[1]),
        st.tuples(sub, sub).map(lambda t: t[0] * t[1]),
        st.tuples(sub, st.sampled_from([P, Q, 3, P * Q])).map(lambda t: sympy.Mod(t[0], t[1])),
        st.tuples(sub, st.sampled_from([P, 2, 5])).map(lambda t: sympy.floor(t[0] / t[1])),
        st.tuples(sub, sub, rat, rat).map(
            lambda t: sympy.Piecewise((t[0], sympy.Lt(t[2], t[3])), (t[1], True))),
        st.tuples(sub, sub).map(lambda t: sympy.Min(*t)),
        st.tuples(sub, sub, sub).map(lambda t: sympy.Max(*t)),
        st.tuples(rat, rat).map(lambda t: sympy.floor(sympy.Min(*t) * (X - 3))),
        st.tuples(rat, rat).map(lambda t: sympy.ceiling(sympy.Max(*t))),
        rat.map(lambda r: sympy.floor(sympy.Abs(r))),
    )


def _bool_tree() -> st.SearchStrategy[sympy.Boolean]:
    rat = _rational_tree(2)
    rel = st.tuples(rat, rat, st.sampled_from([sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le,
                                               sympy.Gt, sympy.Ge])).map(
        lambda t: t[2](t[0], t[1], evaluate=False))
    return st.one_of(rel,
                     st.tuples(rel, rel).map(lambda t: sympy.And(*t)),
                     st.tuples(rel, rel).map(lambda t: sympy.Or(*t)),
                     rel.map(sympy.Not),
                     st.tuples(rel, rel, rel).map(
                         lambda t: sympy.Piecewise((t[0], t[1]), (t[2], True), evaluate=False)))


VALUES = st.tuples(st.integers(-40, 40), st.integers(-40, 40), st.integers(1, 9),
                   st.integers(1, 9), st.integers(-9, -1))


_OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}


def _exact(e: sympy.Basic, vals: tuple[int, ...]) -> object:
    """sympy's exact rational arithmetic at the point; relations compared as Python Fractions."""
    at = dict(zip(SYMS, map(sympy.Integer, vals), strict=True))
    if isinstance(e, sympy.core.relational.Relational):
        lhs, rhs = (Fraction(str(sympy.Rational(s.xreplace(at)))) for s in (e.lhs, e.rhs))
        return _OPS[e.rel_op](lhs, rhs)
    if isinstance(e, sympy.And):
        return all(_exact(a, vals) for a in e.args)
    if isinstance(e, sympy.Or):
        return any(_exact(a, vals) for a in e.args)
    if isinstance(e, sympy.Not):
        return not _exact(e.args[0], vals)
    if e in (sympy.true, sympy.false):
        return bool(e)
    if isinstance(e, sympy.Piecewise) and isinstance(e.args[0][0], sympy.logic.boolalg.Boolean):
        return next(_exact(v, vals) for v, c in e.args if c is sympy.true or _exact(c, vals))
    v = e.xreplace(at)
    assert v.is_Integer, (e, vals, v)
    return int(v)


@settings(max_examples=300, deadline=None)
@given(_int_tree(2), VALUES)
def test_integer_expressions_exact(expr, vals):
    fn = compile_int([expr], SYMS)
    assert fn(*vals)[0] == _exact(expr, vals), (expr, vals, fn.source)


@settings(max_examples=300, deadline=None)
@given(_bool_tree(), VALUES)
def test_relations_over_fractions_exact(cond, vals):
    fn = compile_int([cond], SYMS)
    assert fn(*vals)[0] == _exact(cond, vals), (cond, vals, fn.source)


def test_large_values_stay_exact():
    # floats would round: 2**70 + 1 over 3
    e = sympy.floor((X * P + 1) / 3)
    fn = compile_int([e], [X, P])
    assert fn(2**70, 1)[0] == (2**70 + 1) // 3


def test_unevaluated_products_are_read_as_written():
    with sympy.evaluate(False):
        e = sympy.floor(sympy.Mul(sympy.Rational(1, 4), sympy.Add(X, 3)))
    assert compile_int([e], [X])(5)[0] == 2
    assert "//" in int_source(e)


@settings(max_examples=200, deadline=None)
@given(st.tuples(_rational_tree(1), _rational_tree(1), _rational_tree(1), _rational_tree(1)),
       VALUES)
def test_rational_piecewise_inside_a_floor_is_exact(parts, vals):
    # floor(Piecewise((1/3, c), (1/2, True)) * x): a rational branch is not floored on its own
    a, b, lhs, rhs = parts
    expr = sympy.floor(sympy.Piecewise((a, sympy.Lt(lhs, rhs)), (b, True)) * (X + 7))
    fn = compile_int([expr], SYMS)
    assert fn(*vals)[0] == _exact(expr, vals), (expr, vals, fn.source)
    seed = sympy.floor(sympy.Piecewise((sympy.Rational(1, 3), X < 18), (sympy.Rational(1, 2), True))
                       * sympy.Mod(Y, 18))
    assert compile_int([seed], [X, Y])(0, 7)[0] == 2  # floor(7/3), not 7 * floor(1/3)


def test_symbolic_exponents_are_integer_powers():
    fn = compile_int([2 ** X * Y, sympy.Mod(3 ** X, 7)], [X, Y])
    assert fn(5, -3) == (-96, 5)
    with pytest.raises(ValueError, match="negative exponent"):
        fn(-1, 1)
    assert evaluate_grid(2 ** X, [X], [np.arange(4)]).tolist() == [1, 2, 4, 8]


def test_undefined_values_fail_only_where_evaluated():
    fn = compile_int([sympy.Piecewise((X, X > 0), (sympy.nan, True))], [X])
    assert fn(3) == (3,)
    with pytest.raises(ValueError, match="nan"):
        fn(-1)


def test_unknown_nodes_are_refused_by_name():
    with pytest.raises(TypeError, match="sin"):
        compile_int([sympy.sin(X)], [X])
    with pytest.raises(TypeError, match="Sum.*grid"):
        evaluate_grid(sympy.Sum(X, (Y, 0, P)), [X, P], [1, 2])


POINTS = st.lists(VALUES, min_size=1, max_size=12)


def _grid(points: list[tuple[int, ...]]) -> list[np.ndarray]:
    return [np.array(col, dtype=np.int64) for col in zip(*points, strict=True)]


@settings(max_examples=100, deadline=None)
@given(_int_tree(2), POINTS)
def test_grid_matches_scalar_on_integers(expr, points):
    fn = compile_int([expr], SYMS)
    got = evaluate_grid(expr, SYMS, _grid(points))
    assert got.dtype == np.int64 and got.shape == (len(points),)
    assert got.tolist() == [fn(*p)[0] for p in points], (expr, points)


@settings(max_examples=100, deadline=None)
@given(_bool_tree(), POINTS)
def test_grid_matches_scalar_on_conditions(cond, points):
    fn = compile_int([cond], SYMS)
    got = evaluate_grid(cond, SYMS, _grid(points))
    assert got.dtype == np.bool_
    assert got.tolist() == [fn(*p)[0] for p in points], (cond, points)


def test_grid_broadcasts_scalars_and_refuses_zero_divisors():
    xs = np.arange(-6, 6)
    got = evaluate_grid(sympy.floor(X / P) + sympy.Mod(X, 4), [X, P], [xs, 3])
    assert got.tolist() == [x // 3 + x % 4 for x in range(-6, 6)]
    assert evaluate_grid(sympy.Integer(5), [X], [xs]).tolist() == [5] * 12
    with pytest.raises(ZeroDivisionError):
        evaluate_grid(sympy.floor(X / P), [X, P], [xs, np.arange(12) - 3])
    with pytest.raises(ValueError, match="no branch"):
        evaluate_grid(sympy.Piecewise((X, X > 0)), [X], [xs])
