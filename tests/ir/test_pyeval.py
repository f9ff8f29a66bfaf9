"""compile_int against sympy's own exact evaluation, on random integer expression trees with
the shapes tilec's index maps hold: rational coefficients, symbolic divisors, nested floors,
Mod, Piecewise and relations whose sides are fractions (``G`` is a negative divisor)."""

from __future__ import annotations

import operator
from fractions import Fraction

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from tilec.ir.pyeval import compile_int, int_source

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
    )


def _bool_tree() -> st.SearchStrategy[sympy.Boolean]:
    rat = _rational_tree(2)
    rel = st.tuples(rat, rat, st.sampled_from([sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le,
                                               sympy.Gt, sympy.Ge])).map(
        lambda t: t[2](t[0], t[1], evaluate=False))
    return st.one_of(rel,
                     st.tuples(rel, rel).map(lambda t: sympy.And(*t)),
                     st.tuples(rel, rel).map(lambda t: sympy.Or(*t)),
                     rel.map(sympy.Not))


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
